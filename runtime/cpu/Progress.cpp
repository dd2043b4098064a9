//===- Progress.cpp - what rank 0 prints and writes as the run goes -------===//

#include "Progress.h"
#include "Device.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace tessel;
using namespace tessel::rt;
using program::TensorInfo;

void rt::writeMetrics(Run &run, llvm::json::Object o) {
  if (!run.metrics)
    return;
  *run.metrics << llvm::json::Value(std::move(o)) << "\n";
  run.metrics->flush();
}

void rt::printHeader(const Run &run, const Communicator &comm) {
  for (const EntryRun &e : run.entries) {
    const MeshShape &mesh = e.mesh->shape;
    llvm::outs() << "tessel: @" << e.entry->name << " on "
                 << (run.entries.size() == 1 ? comm.size()
                                             : mesh.numDevices())
                 << (mesh.numDevices() == 1 ? " rank" : " ranks") << " ("
                 << comm.backend() << "), mesh";
    for (auto [axis, size] : llvm::zip(mesh.axisNames, mesh.axisSizes))
      llvm::outs() << " " << axis << "=" << size;
    if (mesh.axisNames.empty())
      llvm::outs() << " none (one device)";
    if (std::string device = deviceDescription(); !device.empty())
      llvm::outs() << ", on " << device;
    llvm::outs() << "\n";
    llvm::outs().flush();
    if (!e.mesh->devices.empty()) {
      llvm::outs() << "tessel: mesh positions 0.." << mesh.numDevices() - 1
                   << " run on ranks";
      for (int64_t r : e.mesh->devices)
        llvm::outs() << " " << r;
      llvm::outs() << "\n";
    }
  }
}

namespace {
/// Prints the metrics of `report` (after loss and grad_norm): scalars as
/// `, name value`, tensors as `, name [v0 v1 ...]`.
void printMetrics(const EntryRun &reporter, const Report &report,
                  llvm::json::Object &metrics) {
  size_t at = 2;
  for (unsigned r : reporter.roles.metrics) {
    const TensorInfo &info = reporter.entry->results[r];
    int64_t n = numElements(info.shape);
    llvm::outs() << ", " << info.name << " ";
    if (info.shape.empty()) {
      llvm::outs() << llvm::format("%.6g", report.values[at]);
      metrics[info.name] = report.values[at++];
      continue;
    }
    llvm::json::Array values;
    llvm::outs() << "[";
    for (int64_t k = 0; k < n; ++k, ++at) {
      llvm::outs() << (k ? " " : "") << llvm::format("%.4g", report.values[at]);
      values.push_back(report.values[at]);
    }
    llvm::outs() << "]";
    metrics[info.name] = std::move(values);
  }
}

} // namespace

double rt::modelFlopsUtilization(const Run &run, double ms) {
  if (run.program.modelFlopsPerStep <= 0 || run.peakFlops <= 0 || ms <= 0)
    return 0;
  return run.program.modelFlopsPerStep * double(run.microSteps) /
         (ms / 1000 * double(run.worldSize) * run.peakFlops);
}

void rt::printProgress(Run &run, int64_t k, const Report &report, double ms) {
  llvm::json::Object metrics{{"step", k}, {"ms_per_step", ms}};
  llvm::outs() << "step " << k;
  // The loss of the whole (accumulated) batch: the micro-steps' mean.
  const EntryRun *reporter = run.reporter();
  if (reporter && reporter->roles.loss) {
    llvm::outs() << llvm::format(": loss %.6f", report.values[0]);
    metrics["loss"] = report.values[0];
  }
  if (reporter && reporter->roles.gradNorm) {
    llvm::outs() << llvm::format(", grad_norm %.6f", report.values[1]);
    metrics["grad_norm"] = report.values[1];
  }
  if (reporter)
    printMetrics(*reporter, report, metrics);
  llvm::outs() << llvm::format(", %.1f ms/step", ms);
  if (run.tokensPerStep) {
    llvm::outs() << llvm::format(", %.0f tokens/s",
                                 run.tokensPerStep * 1000.0 / ms);
    metrics["tokens_per_s"] = run.tokensPerStep * 1000.0 / ms;
  }
  if (double mfu = modelFlopsUtilization(run, ms)) {
    llvm::outs() << llvm::format(", MFU %.1f%%", 100 * mfu);
    metrics["mfu"] = mfu;
  }
  llvm::outs() << "\n";
  llvm::outs().flush();
  writeMetrics(run, std::move(metrics));
}

void rt::printSummary(const Run &run, const Stats &stats) {
  // Rank 0's view; in SPMD programs every rank does the same work.
  double ms = 1000 * stats.seconds / stats.steps;
  std::string mfu;
  if (double u = modelFlopsUtilization(run, ms)) {
    char text[128];
    std::snprintf(text, sizeof text,
                  "; model FLOPs utilization %.1f%% of %g TFLOP/s per rank",
                  100 * u, run.peakFlops / 1e12);
    mfu = text;
  }
  llvm::outs() << llvm::format(
      "summary: %.2f ms/step over %lld steps after the first; matmuls "
      "%.3f GFLOP/step per rank, %.2f GFLOP/s per rank; time in matmuls "
      "%.0f%%, in collectives %.0f%%; peak buffers %.3f MiB on rank 0%s\n",
      ms, (long long)stats.steps, stats.flops / stats.steps / 1e9,
      stats.flops / stats.seconds / 1e9, 100 * stats.gemm / stats.seconds,
      100 * stats.comm / stats.seconds, peakBufferBytes() / 1048576.0,
      mfu.c_str());
  llvm::outs().flush();
}

