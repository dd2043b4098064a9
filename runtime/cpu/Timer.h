//===- Timer.h - the time (and trace events) of runtime calls ---*- C++ -*-===//

#ifndef TESSEL_RUNTIME_TIMER_H
#define TESSEL_RUNTIME_TIMER_H

#include "RankContext.h"

#include <chrono>
#include <cstdint>
#include <string>

namespace tessel::rt {

/// Adds the time of a runtime call to `total` and, when tracing, records it
/// as an event (the name is built only then).
struct Timer {
  template <typename NameFn>
  Timer(double &total, const char *category, NameFn name)
      : total(total), start(std::chrono::steady_clock::now()),
        category(category) {
    RankContext &ctx = rt::currentRank();
    if (ctx.tracing) {
      eventName = name();
      startUs = ctx.nowUs();
    }
  }
  ~Timer() {
    auto end = std::chrono::steady_clock::now();
    total += std::chrono::duration<double>(end - start).count();
    RankContext &ctx = rt::currentRank();
    if (ctx.tracing)
      ctx.events.push_back(
          {std::move(eventName), category, startUs, ctx.nowUs() - startUs});
  }
  double &total;
  std::chrono::steady_clock::time_point start;
  const char *category;
  std::string eventName;
  double startUs = 0;
};

/// "gemm MxNxK (batch B)", for trace events.
inline std::string gemmName(int64_t batch, int64_t m, int64_t n, int64_t k) {
  std::string s = "gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                  std::to_string(k);
  if (batch > 1)
    s += " (batch " + std::to_string(batch) + ")";
  return s;
}

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_TIMER_H
