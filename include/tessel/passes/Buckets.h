//===- Buckets.h - the data-parallel gradient bucket ------------*- C++ -*-===//
//
// One constant shared by the pass that buckets gradient all-reduces
// (--tessel-optimize-collectives' `bucket-bytes` default) and the planner,
// which packs gradients the same way to count the all-reduces it charges.
// Header only: the planning library includes it without the passes.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PASSES_BUCKETS_H
#define TESSEL_PASSES_BUCKETS_H

#include <cstdint>

namespace mlir::tessel {

/// The largest all-reduce bucketed with others, and a bucket's size: 1 MiB
/// per device.
constexpr int64_t kGradientBucketBytes = int64_t(1) << 20;

} // namespace mlir::tessel

#endif // TESSEL_PASSES_BUCKETS_H
