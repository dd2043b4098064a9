//===- Trace.cpp - Chrome/Perfetto traces of a run ------------------------===//

#include "RankContext.h"
#include "tessel/support/SafeTensors.h"

#include "llvm/Support/JSON.h"

#include <set>

using namespace tessel;
using namespace tessel::rt;

namespace {

/// A track's thread id: the rank's own for its host thread; its device's
/// streams after every rank's (ids from 1 << 20 per track).
int64_t threadId(int64_t rank, int track) {
  return int64_t(track) * (int64_t(1) << 20) + rank;
}

std::string trackName(int64_t rank, int track) {
  std::string name = "rank " + std::to_string(rank);
  if (track == TraceEvent::kDeviceCompute)
    name += " GPU compute";
  else if (track == TraceEvent::kDeviceCommunication)
    name += " GPU communication";
  return name;
}

} // namespace

/// Chrome trace JSON: one thread per rank and device stream, complete ("X")
/// events in us.
llvm::Error rt::writeTrace(
    const std::string &path,
    const std::vector<std::pair<int64_t, std::vector<TraceEvent>>> &ranks) {
  llvm::json::Array events;
  for (const auto &[rank, list] : ranks) {
    std::set<int> tracks = {TraceEvent::kHostTrack};
    for (const TraceEvent &e : list)
      tracks.insert(e.track);
    for (int track : tracks)
      events.push_back(llvm::json::Object{
          {"name", "thread_name"},
          {"ph", "M"},
          {"pid", 0},
          {"tid", threadId(rank, track)},
          {"args", llvm::json::Object{{"name", trackName(rank, track)}}}});
    for (const TraceEvent &e : list)
      events.push_back(llvm::json::Object{{"name", e.name},
                                          {"cat", e.category},
                                          {"ph", "X"},
                                          {"ts", e.startUs},
                                          {"dur", e.durationUs},
                                          {"pid", 0},
                                          {"tid", threadId(rank, e.track)}});
  }
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(llvm::json::Object{
      {"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}});
  return writeFileAtomically(path, text);
}
