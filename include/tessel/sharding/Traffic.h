//===- Traffic.h - how many bytes a collective sends ------------*- C++ -*-===//
//
// One formula for the bytes a device sends in a collective, shared by the
// comm report (passes/CommReport.cpp), the reshard planner and the dialect's
// CollectiveOpInterface (each collective op names its CollectiveTraffic).
// Header-only and free of MLIR so every layer can include it; it is in
// namespace mlir::tessel (not ::tessel) because the dialect's public
// headers include it, and a second top-level `tessel` namespace would make
// `tessel::` ambiguous in code that says `using namespace mlir`.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SHARDING_TRAFFIC_H
#define TESSEL_SHARDING_TRAFFIC_H

#include <cstdint>

namespace mlir::tessel {

/// How a collective's traffic is counted (ring algorithms): an all-reduce
/// sends (n-1)/n of its tensor twice, an all-gather, reduce-scatter or
/// all-to-all once, a collective-permute or send the whole tensor; a
/// receive (its send is counted), an axis index or a local slice nothing.
enum class CollectiveTraffic { AllReduce, Exchange, Whole, None };

/// Bytes one device sends in a collective over a group of `group` devices
/// whose larger side (operand or result) has `bytes` bytes.
inline double collectiveSentBytes(CollectiveTraffic traffic, int64_t group,
                                  int64_t bytes) {
  double fraction = double(group - 1) / double(group);
  switch (traffic) {
  case CollectiveTraffic::AllReduce:
    return 2 * fraction * double(bytes);
  case CollectiveTraffic::Exchange:
    return fraction * double(bytes);
  case CollectiveTraffic::Whole:
    return double(bytes);
  case CollectiveTraffic::None:
    return 0;
  }
  return 0;
}

} // namespace mlir::tessel

#endif // TESSEL_SHARDING_TRAFFIC_H
