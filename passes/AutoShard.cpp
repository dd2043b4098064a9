//===- AutoShard.cpp - --tessel-auto-shard --------------------------------===//
//
// Options and the mesh; the integer program is tessel/planning/AutoShard.h.
//
//===----------------------------------------------------------------------===//

#include "tessel/passes/Passes.h"
#include "tessel/planning/AutoShard.h"
#include "tessel/sharding/LogicalRules.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELAUTOSHARDPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// "24GiB", "512MiB", "8GB", "8e9" as bytes; failure otherwise.
FailureOr<double> parseBytes(StringRef text) {
  static const std::pair<StringRef, double> units[] = {
      {"GiB", double(1ull << 30)}, {"MiB", double(1 << 20)},
      {"KiB", 1024.0},             {"GB", 1e9},
      {"MB", 1e6},                 {"KB", 1e3},
      {"B", 1}};
  text = text.trim();
  double scale = 1;
  for (auto [suffix, factor] : units)
    if (text.consume_back(suffix)) {
      scale = factor;
      break;
    }
  double value;
  if (text.trim().getAsDouble(value) || value <= 0)
    return failure();
  return value * scale;
}

struct TesselAutoShardPass
    : tessel::impl::TesselAutoShardPassBase<TesselAutoShardPass> {
  using TesselAutoShardPassBase::TesselAutoShardPassBase;

  FailureOr<MeshOp> findMesh(ModuleOp module) {
    SmallVector<MeshOp> meshes(module.getOps<MeshOp>());
    if (meshSpec.empty()) {
      if (meshes.size() == 1)
        return meshes.front();
      return module.emitError()
             << "auto-shard needs mesh=AXIS:SIZE,... (the module has "
             << meshes.size() << " meshes)";
    }
    std::string spec = meshSpec;
    std::replace(spec.begin(), spec.end(), ':', '=');
    if (auto existing = module.lookupSymbol<MeshOp>("mesh")) {
      llvm::Expected<MeshOp> want = addMeshFromSpec(module, spec);
      if (!want)
        return module.emitError(llvm::toString(want.takeError()));
      bool same = want->getAxisNames() == existing.getAxisNames() &&
                  want->getAxisSizes() == existing.getAxisSizes();
      want->erase();
      if (!same)
        return existing.emitError()
               << "the module's @mesh differs from mesh=" << meshSpec
               << "; hint: leave mesh= out to plan on it";
      return existing;
    }
    llvm::Expected<MeshOp> mesh = addMeshFromSpec(module, spec);
    if (!mesh)
      return module.emitError(llvm::toString(mesh.takeError()));
    return *mesh;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(funcName);
    if (!func || func.isExternal()) {
      module.emitError() << "auto-shard: no function @" << funcName
                         << " with a body; hint: func=NAME";
      return signalPassFailure();
    }
    planning::AutoShardOptions o;
    if (!memory.empty()) {
      FailureOr<double> bytes = parseBytes(memory);
      if (failed(bytes)) {
        module.emitError() << "auto-shard: memory='" << memory
                           << "' is not a size; hint: 24GiB, 512MiB, 8e9";
        return signalPassFailure();
      }
      o.memoryBytes = *bytes;
    }
    o.training = training;
    o.optimizerSlots = optimizerSlots;
    o.matmulFlops = matmulTflops * 1e12;
    o.memoryBandwidth = memoryGbps * 1e9;
    o.linkBandwidth = linkGbps * 1e9;
    o.linkLatency = linkLatencyUs * 1e-6;
    o.hostBandwidth = hostGbps * 1e9;
    o.timeLimitSeconds = timeLimit;
    o.maxPairs = maxPairs;
    FailureOr<MeshOp> mesh = findMesh(module);
    if (failed(mesh) ||
        failed(planning::autoShard(func, *mesh, o,
                                   report ? &llvm::outs() : nullptr)))
      return signalPassFailure();
  }
};

} // namespace
