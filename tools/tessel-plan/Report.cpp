//===- Report.cpp - tessel-plan's table and its reasons -------------------===//

#include "Plan.h"

#include "llvm/Support/FormatVariadic.h"

#include <functional>

using namespace mlir::tessel::planning;

namespace {

double gib(double bytes) { return bytes / double(1ull << 30); }

std::string si(double v) {
  const char *units[] = {"", "K", "M", "G", "T", "P", "E"};
  int k = 0;
  while (v >= 1000 && k < 6)
    v /= 1000, ++k;
  return llvm::formatv("{0:f2}{1}", v, units[k]).str();
}

void printHeader(llvm::raw_ostream &os, const ModelProfile &m,
                 const Hardware &hw, llvm::StringRef hardwareName) {
  const StateBytes &s = m.perParameter;
  os << llvm::formatv(
      "model @{0}: {1} parameters ({2:f0} bytes each: weights {3:f0}, "
      "gradients {4:f0}, optimizer {5:f0}{11}), {6} layers, {7} tokens per "
      "sample, {8}FLOP per sample (forward and backward), {9:f2} MiB of "
      "activations per sample kept for the backward; computes in {10}\n",
      m.name, si(m.parameters), s.total(), s.weights, s.gradients,
      s.optimizer, m.layers, int64_t(m.tokensPerSample),
      si(m.trainFlopsPerSample), m.keptBytesPerSample / double(1 << 20),
      m.computeType,
      s.computeCopies > 0
          ? llvm::formatv("; and {0:f1} for the weights' compute-type copies "
                          "the backward keeps",
                          s.computeCopies)
                .str()
          : std::string());
  os << llvm::formatv(
      "hardware {0}: {1}, {2:f0} GiB ({3:f0} usable), {4:f0} TFLOP/s {5} x "
      "{6:f2}, {7} per node; {8}: {9:f0} GB/s, {10}: {11:f0} GB/s\n",
      hardwareName, hw.name, gib(hw.memoryBytes), gib(hw.usableBytes()),
      hw.peak(m.computeType) / 1e12, m.computeType, hw.efficiency,
      hw.devicesPerNode, hw.intraNode.name, hw.intraNode.bandwidth / 1e9,
      hw.interNode.name, hw.interNode.bandwidth / 1e9);
}

void printTable(llvm::raw_ostream &os, const std::vector<Estimate> &ranked,
                size_t top) {
  os << llvm::formatv("{0,3} {1,-62} | {2,44} | {3,57} | {4,5}\n", "#",
                      "plan", "memory per device, GiB", "step time, s",
                      "MFU");
  os << llvm::formatv("{0,3} {1,-62} | {2,6} {3,6} {4,6} {5,6} {6,6} {7,7} | "
                      "{8,8} {9,7} {10,7} {11,7} {12,7} {13,7} {14,8} |\n",
                      "", "", "weight", "grad", "optim", "activ", "work",
                      "total", "compute", "tp", "pp", "ep", "dp", "bubble",
                      "total");
  for (size_t i = 0; i < std::min(top, ranked.size()); ++i) {
    const Estimate &e = ranked[i];
    const Memory &m = e.memory;
    const StepTime &t = e.time;
    os << llvm::formatv(
        "{0,3} {1,-62} | {2,6:f1} {3,6:f1} {4,6:f1} {5,6:f1} {6,6:f1} "
        "{7,7:f1} | {8,8:f3} {9,7:f3} {10,7:f3} {11,7:f3} {12,7:f3} "
        "{13,7:f3} {14,8:f3} | {15,4:f1}%{16}\n",
        i + 1, e.plan.describe(), gib(m.weights), gib(m.gradients),
        gib(m.optimizer), gib(m.activations), gib(m.working), gib(m.total()),
        t.compute, t.tp, t.pp, t.ep, t.dp, t.bubble, t.total(), 100 * e.mfu,
        e.fits ? (e.load.measured ? "  verified" : "") : "  does not fit");
  }
}

/// The largest difference of `other`'s step time from `best`'s, in words.
std::string mainCost(const Estimate &best, const Estimate &other) {
  const StepTime &a = best.time, &b = other.time;
  std::pair<double, const char *> parts[] = {
      {b.compute - a.compute, "compute (recomputation, or matmuls split "
                              "less evenly)"},
      {b.tp - a.tp, "tensor-parallel communication"},
      {b.pp - a.pp, "pipeline transfers"},
      {b.ep - a.ep, "expert-parallel all-to-alls"},
      {b.dp - a.dp, "exposed data-parallel communication"},
      {b.bubble - a.bubble, "pipeline bubble"}};
  auto *worst = std::max_element(
      std::begin(parts), std::end(parts),
      [](auto &x, auto &y) { return x.first < y.first; });
  return llvm::formatv("+{0:f3} s {1}", worst->first, worst->second).str();
}

/// The alternatives a reader weighs against the winner, each as the best
/// plan that differs from it in one respect.
void printReasons(llvm::raw_ostream &os, const std::vector<Estimate> &ranked) {
  const Estimate &best = ranked.front();
  const Plan &w = best.plan;
  std::pair<const char *, std::function<bool(const Plan &)>> families[] = {
      {"another tp degree", [&](const Plan &p) { return p.tp != w.tp; }},
      {"another pp degree", [&](const Plan &p) { return p.pp != w.pp; }},
      {"another ep degree", [&](const Plan &p) { return p.ep != w.ep; }},
      {"another ZeRO stage", [&](const Plan &p) { return p.zero != w.zero; }},
      {"other recomputation",
       [&](const Plan &p) { return p.recompute != w.recompute; }},
      {"another microbatch size",
       [&](const Plan &p) { return p.microBatchSize != w.microBatchSize; }}};
  os << "why " << w.describe() << ":\n";
  for (auto &[what, differs] : families) {
    auto it = llvm::find_if(ranked,
                            [&](const Estimate &e) { return differs(e.plan); });
    if (it == ranked.end())
      continue;
    if (!it->fits) {
      os << llvm::formatv("  vs {0} ({1}): does not fit, {2:f1} GiB per "
                          "device at best\n",
                          what, it->plan.describe(), gib(it->memory.total()));
      continue;
    }
    double slower = it->time.total() / best.time.total() - 1;
    os << llvm::formatv("  vs {0} ({1}): {2:f1}% slower; {3}\n", what,
                        it->plan.describe(), 100 * slower,
                        mainCost(best, *it));
  }
}

} // namespace

void tessel_plan::printReport(llvm::raw_ostream &os, const ModelProfile &model,
                              const Hardware &hw, llvm::StringRef hardwareName,
                              const std::vector<Estimate> &ranked,
                              size_t searched, size_t top) {
  printHeader(os, model, hw, hardwareName);
  size_t fitting = llvm::count_if(ranked, [](const Estimate &e) {
    return e.fits;
  });
  os << llvm::formatv("{0} plans searched, {1} fit in memory\n\n", searched,
                      fitting);
  printTable(os, ranked, top);
  if (!ranked.empty() && ranked.front().fits) {
    os << "\n";
    printReasons(os, ranked);
  }
}
