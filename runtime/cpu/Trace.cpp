//===- Trace.cpp - Chrome/Perfetto traces of a run ------------------------===//

#include "RankContext.h"
#include "tessel/support/SafeTensors.h"

#include "llvm/Support/JSON.h"

using namespace tessel;
using namespace tessel::rt;

/// Chrome trace JSON: one thread per rank, complete ("X") events in us.
llvm::Error rt::writeTrace(
    const std::string &path,
    const std::vector<std::pair<int64_t, std::vector<TraceEvent>>> &ranks) {
  llvm::json::Array events;
  for (const auto &[rank, list] : ranks) {
    events.push_back(llvm::json::Object{
        {"name", "thread_name"},
        {"ph", "M"},
        {"pid", 0},
        {"tid", rank},
        {"args",
         llvm::json::Object{{"name", "rank " + std::to_string(rank)}}}});
    for (const TraceEvent &e : list)
      events.push_back(llvm::json::Object{{"name", e.name},
                                          {"cat", e.category},
                                          {"ph", "X"},
                                          {"ts", e.startUs},
                                          {"dur", e.durationUs},
                                          {"pid", 0},
                                          {"tid", rank}});
  }
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(llvm::json::Object{
      {"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}});
  return writeFileAtomically(path, text);
}
