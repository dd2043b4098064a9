//===- CommBudget.cpp - a pass plugin: a communication budget -------------===//
//
// tessel-ext-comm-budget reports, for each function of a partitioned
// program, how many collectives it runs and how many bytes one device sends
// in them (the same ring-algorithm count as Tessel's comm report), per set
// of mesh axes; with max-bytes=N it fails the compile when a function sends
// more than N bytes, naming its largest collective. Run it after
// partitioning:
//
//   tessel-compile model.mlir --mesh dp=2,tp=2 --strategy dp-tp \
//       --load-pass-plugin TesselExtPasses.so \
//       --extend "after-partition=tessel-ext-comm-budget{max-bytes=1000000}"
//
// It uses only Tessel's public API (tessel/Tessel.h): the collectives'
// interface and the traffic formula.
//
//===----------------------------------------------------------------------===//

#include "tessel/Tessel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace {

struct CommBudgetPass
    : PassWrapper<CommBudgetPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CommBudgetPass)
  CommBudgetPass() = default;
  CommBudgetPass(const CommBudgetPass &other) : PassWrapper(other) {}
  StringRef getArgument() const override { return "tessel-ext-comm-budget"; }
  StringRef getDescription() const override {
    return "Reports each function's collectives and bytes sent per device; "
           "fails above max-bytes (an example plugin)";
  }
  Option<int64_t> maxBytes{*this, "max-bytes",
                           llvm::cl::desc("Bytes one device may send per "
                                          "function call (0: no limit)"),
                           llvm::cl::init(0)};

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(check(func)))
        return signalPassFailure();
  }

  /// Bytes one device sends in `op`: its group is the product of its axes'
  /// sizes on its mesh.
  static double sentBytes(tessel::CollectiveOpInterface op) {
    int64_t group = 1;
    if (tessel::MeshOp mesh = tessel::lookupMesh(op, op.getMeshAttr()))
      for (Attribute axis : op.getAxes())
        group *= mesh.getAxisSize(cast<StringAttr>(axis).getValue());
    return tessel::collectiveSentBytes(op.getTraffic(), group,
                                       op.getTrafficBytes());
  }

  LogicalResult check(func::FuncOp func) {
    struct Tally {
      int64_t count = 0;
      double bytes = 0;
    };
    llvm::MapVector<Attribute, Tally> byAxes;
    double total = 0, largest = 0;
    Operation *largestOp = nullptr;
    func.walk([&](tessel::CollectiveOpInterface op) {
      double bytes = sentBytes(op);
      Tally &t = byAxes[op.getAxes()];
      ++t.count;
      t.bytes += bytes;
      total += bytes;
      if (bytes > largest) {
        largest = bytes;
        largestOp = op;
      }
    });
    if (byAxes.empty())
      return success();
    InFlightDiagnostic remark = func.emitRemark()
                                << llvm::formatv("comm budget: @{0} sends {1} "
                                                 "bytes per device",
                                                 func.getSymName(),
                                                 int64_t(total));
    for (auto &[axes, t] : byAxes)
      remark << llvm::formatv("; {0} collective(s) over {1}: {2} bytes",
                              t.count, axes, int64_t(t.bytes));
    remark.report();
    if (maxBytes > 0 && total > double(maxBytes)) {
      InFlightDiagnostic error = func.emitError()
                                 << llvm::formatv(
                                        "@{0} sends {1} bytes per device, "
                                        "over the budget of {2}",
                                        func.getSymName(), int64_t(total),
                                        int64_t(maxBytes));
      error.attachNote(largestOp->getLoc())
          << llvm::formatv("the largest collective ({0} bytes)",
                           int64_t(largest));
      return failure();
    }
    return success();
  }
};

} // namespace

/// The plugin's entry point; TESSEL_PLUGIN_VERSION lets tessel-opt and
/// tessel-compile refuse it when it was built against another Tessel.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "TesselExtPasses", TESSEL_PLUGIN_VERSION,
          [] { PassRegistration<CommBudgetPass>(); }};
}
