//===- Pipeline.cpp - --tessel-assign-stages, --tessel-pipeline-split, ------===//
//                    --tessel-pipeline-report
//===----------------------------------------------------------------------===//

#include "tessel/pipeline/Pipeline.h"
#include "tessel/passes/Passes.h"

#include "tessel/dialects/tessel/TesselOps.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#define DEBUG_TYPE "tessel-pipeline"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELASSIGNSTAGESPASS
#define GEN_PASS_DEF_TESSELPIPELINESPLITPASS
#define GEN_PASS_DEF_TESSELPIPELINEREPORTPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;
namespace pl = ::tessel::pipeline;

namespace {

struct TesselAssignStagesPass
    : mlir::tessel::impl::TesselAssignStagesPassBase<TesselAssignStagesPass> {
  using TesselAssignStagesPassBase::TesselAssignStagesPassBase;

  void runOnOperation() override {
    auto f = getOperation().lookupSymbol<func::FuncOp>(funcName);
    if (!f || f.isExternal()) {
      getOperation().emitError() << "no function @" << funcName
                                 << " to assign pipeline stages in";
      return signalPassFailure();
    }
    if (stages < 1) {
      f.emitError() << "stages must be at least 1, not " << stages;
      return signalPassFailure();
    }
    StageAssignment how{stages, boundaries};
    if (failed(assignStages(f, how, report ? &llvm::outs() : nullptr)))
      signalPassFailure();
  }
};

struct TesselPipelineSplitPass
    : mlir::tessel::impl::TesselPipelineSplitPassBase<TesselPipelineSplitPass> {
  using TesselPipelineSplitPassBase::TesselPipelineSplitPassBase;

  void runOnOperation() override {
    PipelineSplitOptions o;
    o.func = funcName;
    o.axis = axis;
    llvm::Expected<pl::ScheduleKind> kind = pl::parseScheduleKind(schedule);
    if (!kind) {
      getOperation().emitError()
          << "pipeline-split: " << llvm::toString(kind.takeError());
      return signalPassFailure();
    }
    o.schedule.kind = *kind;
    o.schedule.microbatches = microbatches;
    o.schedule.virtualStages = virtualStages;
    if (failed(splitPipeline(getOperation(), o)))
      signalPassFailure();
  }
};

/// Bytes `f` sends per call.
int64_t bytesSent(func::FuncOp f) {
  int64_t bytes = 0;
  f.walk([&](SendOp send) {
    auto t = cast<RankedTensorType>(send.getInput().getType());
    bytes += t.getNumElements() *
             ((t.getElementType().getIntOrFloatBitWidth() + 7) / 8);
  });
  return bytes;
}

struct TesselPipelineReportPass
    : mlir::tessel::impl::TesselPipelineReportPassBase<TesselPipelineReportPass> {
  using TesselPipelineReportPassBase::TesselPipelineReportPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<pl::ScheduleOptions> options = pipelineScheduleOf(module);
    if (failed(options)) {
      module.emitError() << "pipeline-report: this module has no split "
                            "pipeline; run --tessel-pipeline-split first";
      return signalPassFailure();
    }
    llvm::Expected<pl::Schedule> schedule = pl::buildSchedule(*options);
    llvm::Expected<pl::Simulation> sim =
        schedule ? pl::simulate(*schedule)
                 : llvm::Expected<pl::Simulation>(schedule.takeError());
    if (!sim) {
      module.emitError() << "pipeline-report: "
                         << llvm::toString(sim.takeError());
      return signalPassFailure();
    }
    std::vector<int64_t> sent(options->ranks, 0);
    for (auto f : module.getOps<func::FuncOp>())
      if (auto r = f->getAttrOfType<IntegerAttr>(kPipelineRankAttrName))
        sent[r.getInt()] = bytesSent(f);
    double textbook = pl::textbookBubble(options->ranks, options->microbatches);
    std::optional<double> costed;
    if (!costs.empty()) {
      if (costs.size() != 3 || llvm::any_of(costs, [](double c) {
            return !(c > 0);
          })) {
        module.emitError() << "pipeline-report: costs needs three positive "
                              "times, F,B,W (as costs=1,2,1)";
        return signalPassFailure();
      }
      llvm::Expected<pl::Simulation> withCosts =
          pl::simulate(*schedule, {costs[0], costs[1], costs[2]});
      if (!withCosts) {
        module.emitError() << "pipeline-report: "
                           << llvm::toString(withCosts.takeError());
        return signalPassFailure();
      }
      costed = withCosts->bubbleFraction;
    }
    if (format == "json") {
      llvm::json::Object o{
          {"schedule", pl::scheduleName(options->kind)},
          {"ranks", options->ranks},
          {"virtual", options->virtualStages},
          {"microbatches", options->microbatches},
          {"bubble", sim->bubbleFraction},
          {"textbook_bubble", textbook},
          {"peak_in_flight", llvm::json::Array(sim->peakInFlight)},
          {"bytes_sent", llvm::json::Array(sent)}};
      if (costed)
        o["bubble_with_costs"] = *costed;
      llvm::outs() << llvm::json::Value(std::move(o)) << "\n";
      return;
    }
    llvm::raw_ostream &os = llvm::outs();
    os << "pipeline: " << pl::scheduleName(options->kind) << ", "
       << options->ranks << " ranks";
    if (options->virtualStages > 1)
      os << " x " << options->virtualStages << " virtual stages";
    os << ", " << options->microbatches
       << (options->microbatches == 1 ? " microbatch\n" : " microbatches\n");
    pl::printGantt(*schedule, *sim, os);
    os << llvm::format("bubble: %.3f (simulated, F = B = W = 1); "
                       "(p-1)/(m+p-1) = %.3f\n",
                       sim->bubbleFraction, textbook);
    if (costed)
      os << llvm::format("bubble: %.3f (simulated, F = %g, B = %g, W = %g)\n",
                         *costed, double(costs[0]), double(costs[1]),
                         double(costs[2]));
    for (int64_t r = 0; r < options->ranks; ++r)
      os << "rank " << r << ": keeps at most " << sim->peakInFlight[r]
         << (sim->peakInFlight[r] == 1 ? " microbatch" : " microbatches")
         << " of activations, sends " << sent[r] << " bytes per step\n";
  }
};

} // namespace
