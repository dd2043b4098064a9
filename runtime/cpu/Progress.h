//===- Progress.h - what rank 0 prints and writes as the run goes -*- C++ -*-===//
//
// The run's header, the progress line of a step (loss, grad norm, metrics,
// ms/step, tokens/s, model FLOPs utilization), the --metrics file and the
// summary at the end. Internal to the runtime (RankLoop.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_PROGRESS_H
#define TESSEL_RUNTIME_PROGRESS_H

#include "Run.h"

#include "llvm/Support/JSON.h"

#include <vector>

namespace tessel::rt {

/// Time spent in the steps after the first (which warms caches and pages).
struct Stats {
  double seconds = 0, flops = 0, gemm = 0, comm = 0;
  int64_t steps = 0;
};

/// What rank 0 reports for a step: the loss, the gradient norm and every
/// metric result's elements, in order.
struct Report {
  std::vector<double> values; // loss, grad_norm, metrics...
};

/// Appends `o` as one line of the --metrics file, if any.
void writeMetrics(Run &run, llvm::json::Object o);
/// The meshes and ranks of each entry, and the device.
void printHeader(const Run &run, const Communicator &comm);
/// The model FLOPs utilization of steps of `ms` milliseconds: the model's
/// matmul FLOPs per step (--tessel-train-step's count, no recomputation)
/// over what every rank's peak allows; 0 where either is unknown.
double modelFlopsUtilization(const Run &run, double ms);
/// Step k's line (and --metrics record), from rank 0.
void printProgress(Run &run, int64_t k, const Report &report, double ms);
/// The steps after the first, from rank 0.
void printSummary(const Run &run, const Stats &stats);

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_PROGRESS_H
