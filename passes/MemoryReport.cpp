//===- MemoryReport.cpp - --tessel-memory-report --------------------------===//
//
// Prints planning::estimateMemory (tessel/planning/ProgramCosts.h), the
// liveness estimate tessel-plan also reads: not an allocator, what buffers
// would hold with perfect reuse and no fusion; enough to compare
// strategies, recomputation policies and ZeRO stages.
//
//===----------------------------------------------------------------------===//

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/passes/Passes.h"
#include "tessel/planning/ProgramCosts.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELMEMORYREPORTPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

std::string human(int64_t bytes) {
  if (bytes >= (int64_t(1) << 30))
    return llvm::formatv("{0:f2} GiB", bytes / double(int64_t(1) << 30));
  if (bytes >= (1 << 20))
    return llvm::formatv("{0:f2} MiB", bytes / double(1 << 20));
  if (bytes >= (1 << 10))
    return llvm::formatv("{0:f2} KiB", bytes / double(1 << 10));
  return llvm::formatv("{0} B", bytes);
}

struct TesselMemoryReportPass
    : tessel::impl::TesselMemoryReportPassBase<TesselMemoryReportPass> {
  using TesselMemoryReportPassBase::TesselMemoryReportPassBase;

  void runOnOperation() override {
    if (format != "text" && format != "json") {
      getOperation().emitError() << "format must be text or json";
      return signalPassFailure();
    }
    llvm::json::Array functions;
    bool found = false;
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || (!funcName.empty() && func.getName() != funcName))
        continue;
      found = true;
      planning::MemoryEstimate e = planning::estimateMemory(func);
      bool spmd = func->hasAttr(TesselDialect::kSpmdAttrName);
      if (format == "json") {
        llvm::json::Object o{{"function", func.getName()},
                             {"per_device", spmd},
                             {"argument_bytes", e.arguments},
                             {"peak_bytes", e.peak},
                             {"peak_at", e.peakAt}};
        if (e.keptForBackward >= 0)
          o["kept_for_backward_bytes"] = e.keptForBackward;
        if (e.peakBeforeUpdate != e.peak)
          o["peak_before_update_bytes"] = e.peakBeforeUpdate;
        functions.push_back(std::move(o));
        continue;
      }
      llvm::outs() << "Memory of @" << func.getName()
                   << (spmd ? " per device" : "") << ":\n"
                   << "  arguments:         " << e.arguments << " bytes ("
                   << human(e.arguments) << ")\n"
                   << "  peak of computed:  " << e.peak << " bytes ("
                   << human(e.peak) << ") at " << e.peakAt << "\n";
      if (e.peakBeforeUpdate != e.peak)
        llvm::outs() << "  peak before update: " << e.peakBeforeUpdate
                     << " bytes (" << human(e.peakBeforeUpdate)
                     << "; forward and backward)\n";
      if (e.keptForBackward >= 0)
        llvm::outs() << "  kept for backward: " << e.keptForBackward
                     << " bytes (" << human(e.keptForBackward) << ")\n";
    }
    if (!found && !funcName.empty()) {
      getOperation().emitError()
          << "no function @" << funcName << " to report on";
      return signalPassFailure();
    }
    if (format == "json")
      llvm::outs() << llvm::formatv("{0:2}",
                                    llvm::json::Value(std::move(functions)))
                   << "\n";
  }
};

} // namespace
