//===- MapLoopsToGpu.cpp - loop nests of a host function as GPU launches --===//
//
// After bufferization and convert-linalg-to-parallel-loops, every linalg op
// of a function is a loop nest: an scf.parallel over its parallel
// dimensions, with scf.for over its reduction dimensions inside (or only
// scf.for, when every dimension reduces). This pass makes each top-level
// nest one gpu.launch:
//
//  * an scf.parallel is flattened: thread t of the grid (blocks of
//    kThreads) takes the t-th point of the iteration space, in row-major
//    order, and the threads past the end do nothing. Reductions inside a
//    point run sequentially in its thread;
//  * a nest of scf.for alone (a reduction to a scalar) runs in one thread.
//
// Nests that call functions (the runtime: matmuls, collectives) stay on the
// host, as does scalar code between nests: all memory is reachable from both
// (runtime/cuda allocates managed memory), and launches complete before the
// host goes on. gpu-kernel-outlining then moves each launch body to a
// gpu.func.
//
//===----------------------------------------------------------------------===//

#include "tessel/lowering/Lowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace {

constexpr int64_t kThreads = 256;

/// The constant trip count of a loop dimension, or failure.
FailureOr<int64_t> tripCount(Value lb, Value ub, Value step) {
  auto c = [](Value v) -> std::optional<int64_t> {
    if (auto op = v.getDefiningOp<arith::ConstantIndexOp>())
      return op.value();
    return std::nullopt;
  };
  auto l = c(lb), u = c(ub), s = c(step);
  if (!l || !u || !s || *s <= 0)
    return failure();
  return *u > *l ? (*u - *l + *s - 1) / *s : 0;
}

/// Whether `op` may run on the device: no calls, no allocation.
bool runsOnDevice(Operation *op) {
  WalkResult r = op->walk([](Operation *inner) {
    if (isa<func::CallOp, memref::AllocOp, memref::AllocaOp,
            memref::DeallocOp>(inner))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !r.wasInterrupted();
}

/// Replaces `loop` by a launch of ceil(total / kThreads) blocks whose thread
/// t (t < total) runs `ops` (cloned) for the t-th point: `bind(b, t,
/// mapping)` maps the loop's induction variables.
void emitLaunch(Operation *loop, int64_t total,
                function_ref<void(OpBuilder &, Value, IRMapping &)> bind,
                ArrayRef<Operation *> ops) {
  Location loc = loop->getLoc();
  OpBuilder b(loop);
  int64_t threads = std::min(total, kThreads);
  int64_t blocks = (total + threads - 1) / threads;
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value one = cst(1);
  auto launch = gpu::LaunchOp::create(b, loc, cst(blocks), one, one,
                                      cst(threads), one, one);
  OpBuilder in = OpBuilder::atBlockBegin(&launch.getBody().front());
  Value bx = launch.getBlockIds().x, tx = launch.getThreadIds().x;
  Value id = arith::AddIOp::create(
      in, loc,
      arith::MulIOp::create(in, loc, bx,
                            arith::ConstantIndexOp::create(in, loc, threads)),
      tx);
  Value inRange = arith::CmpIOp::create(
      in, loc, arith::CmpIPredicate::ult, id,
      arith::ConstantIndexOp::create(in, loc, total));
  auto guard = scf::IfOp::create(in, loc, inRange, /*withElse=*/false);
  OpBuilder g = guard.getThenBodyBuilder();
  IRMapping map;
  bind(g, id, map);
  // Constant buffers are globals of the host module; the kernel reads its
  // own copy (gpu-kernel-outlining copies the global into the gpu.module).
  llvm::SetVector<Value> used;
  for (Operation *op : ops) {
    used.insert(op->operand_begin(), op->operand_end());
    getUsedValuesDefinedAbove(op->getRegions(), used);
  }
  for (Value v : used)
    if (auto global = v.getDefiningOp<memref::GetGlobalOp>())
      map.map(v, g.clone(*global)->getResult(0));
  for (Operation *op : ops)
    g.clone(*op, map);
  gpu::TerminatorOp::create(in, loc);
  loop->erase();
}

/// The perfect nest of scf.for loops (no iteration arguments) from `outer`
/// down to an scf.parallel, or failure (a sequential nest).
FailureOr<std::pair<SmallVector<scf::ForOp>, scf::ParallelOp>>
forsAroundParallel(scf::ForOp outer) {
  SmallVector<scf::ForOp> fors;
  Operation *cur = outer;
  while (auto f = dyn_cast<scf::ForOp>(cur)) {
    if (!f.getInitArgs().empty() || f.getBody()->getOperations().size() != 2)
      return failure();
    fors.push_back(f);
    cur = &f.getBody()->front();
  }
  auto par = dyn_cast<scf::ParallelOp>(cur);
  if (!par)
    return failure();
  return std::make_pair(fors, par);
}

/// Replaces `root` (`loop`, or scf.for loops `fors` around it) by a launch
/// flattened over `loop`'s iteration space; each thread runs `fors`, if
/// any, around its point of the body. Reduction loops outside the parallel
/// ones (convert-linalg-to-parallel-loops keeps the op's loop order, e.g.
/// a bias gradient's [reduction, reduction, parallel]) move inside: every
/// point still accumulates in the same order.
LogicalResult mapParallel(Operation *root, scf::ParallelOp loop,
                          ArrayRef<scf::ForOp> fors) {
  SmallVector<int64_t> counts;
  for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(),
                                       loop.getUpperBound(), loop.getStep())) {
    FailureOr<int64_t> n = tripCount(lb, ub, step);
    if (failed(n))
      return failure();
    counts.push_back(*n);
  }
  int64_t total = 1;
  for (int64_t n : counts)
    total *= n;
  if (total == 0) {
    root->erase();
    return success();
  }
  auto bind = [&](OpBuilder &g, Value id, IRMapping &map) {
    Location loc = loop.getLoc();
    int64_t stride = total;
    for (auto [i, iv] : llvm::enumerate(loop.getInductionVars())) {
      stride /= counts[i];
      // (id / stride) % count: this dimension's index.
      Value q = arith::DivUIOp::create(
          g, loc, id, arith::ConstantIndexOp::create(g, loc, stride));
      Value idx = arith::RemUIOp::create(
          g, loc, q, arith::ConstantIndexOp::create(g, loc, counts[i]));
      Value scaled = arith::MulIOp::create(g, loc, idx, loop.getStep()[i]);
      map.map(iv, arith::AddIOp::create(g, loc, loop.getLowerBound()[i],
                                        scaled)
                      .getResult());
    }
    for (scf::ForOp f : fors) {
      auto inner = scf::ForOp::create(
          g, f.getLoc(), map.lookupOrDefault(f.getLowerBound()),
          map.lookupOrDefault(f.getUpperBound()),
          map.lookupOrDefault(f.getStep()));
      map.map(f.getInductionVar(), inner.getInductionVar());
      g.setInsertionPoint(inner.getBody()->getTerminator());
    }
  };
  SmallVector<Operation *> body = llvm::to_vector(llvm::map_range(
      loop.getBody()->without_terminator(), [](Operation &op) { return &op; }));
  emitLaunch(root, total, bind, body);
  return success();
}

/// A nest of scf.for (no parallel dimension): one thread runs it.
void mapSequential(scf::ForOp loop) {
  emitLaunch(loop, 1, [](OpBuilder &, Value, IRMapping &) {},
             {loop.getOperation()});
}

struct MapLoopsToGpuPass
    : PassWrapper<MapLoopsToGpuPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MapLoopsToGpuPass)
  StringRef getArgument() const override { return "tessel-map-loops-to-gpu"; }
  StringRef getDescription() const override {
    return "Each top-level loop nest of a host function (from "
           "convert-linalg-to-parallel-loops) as one gpu.launch: parallel "
           "dimensions flattened over threads, reductions sequential in a "
           "thread";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<gpu::GPUDialect, arith::ArithDialect, scf::SCFDialect>();
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> nests;
    module.walk([&](func::FuncOp f) {
      for (Block &block : f.getBody())
        for (Operation &op : block)
          if (isa<scf::ParallelOp, scf::ForOp>(op) && runsOnDevice(&op))
            nests.push_back(&op);
    });
    for (Operation *op : nests) {
      scf::ParallelOp par = dyn_cast<scf::ParallelOp>(op);
      SmallVector<scf::ForOp> fors;
      if (auto f = dyn_cast<scf::ForOp>(op)) {
        auto nest = forsAroundParallel(f);
        if (failed(nest)) {
          mapSequential(f);
          continue;
        }
        std::tie(fors, par) = *nest;
      }
      if (failed(mapParallel(op, par, fors))) {
        op->emitError("a parallel loop with non-constant bounds cannot be "
                      "mapped to the GPU");
        return signalPassFailure();
      }
    }
  }
};

/// Moves every kernel into one gpu.module, each named after the module
/// gpu-kernel-outlining gave it (one module per kernel would make one
/// fatbin, one ptxas run and one module load each); identical kernels (every
/// layer repeats the same shapes) become one.
struct MergeGpuModulesPass
    : PassWrapper<MergeGpuModulesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MergeGpuModulesPass)
  StringRef getArgument() const override { return "tessel-merge-gpu-modules"; }
  StringRef getDescription() const override {
    return "All kernels in one gpu.module, identical ones once";
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto gpuModules = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.size() < 2)
      return;
    gpu::GPUModuleOp target = gpuModules.front();
    MLIRContext *ctx = &getContext();
    StringAttr targetName = target.getSymNameAttr();
    // (old module, old kernel) -> new kernel name.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    llvm::StringMap<StringAttr> byText;
    llvm::StringSet<> globals;
    for (auto global : target.getOps<memref::GlobalOp>())
      globals.insert(global.getSymName());
    for (gpu::GPUModuleOp m : gpuModules) {
      // Globals the kernels read (constants): one copy of each name.
      for (auto global :
           llvm::make_early_inc_range(m.getOps<memref::GlobalOp>())) {
        if (m == target)
          continue;
        if (!globals.insert(global.getSymName()).second)
          global.erase();
        else
          global->moveBefore(target.getBody()->getTerminator());
      }
      for (auto f : llvm::make_early_inc_range(m.getOps<gpu::GPUFuncOp>())) {
        StringAttr oldName = f.getNameAttr();
        // The text without the name decides what is identical.
        f.setName("kernel");
        std::string text;
        {
          llvm::raw_string_ostream os(text);
          f->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
        }
        f.setName(m.getSymName());
        auto [it, fresh] = byText.try_emplace(text, f.getNameAttr());
        renamed[{m.getSymNameAttr(), oldName}] = it->second;
        if (!fresh)
          f.erase();
        else if (m != target)
          f->moveBefore(target.getBody()->getTerminator());
      }
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr k = launch.getKernel();
      StringAttr name =
          renamed.lookup({k.getRootReference(), k.getLeafReference()});
      launch.setKernelAttr(SymbolRefAttr::get(
          targetName, {FlatSymbolRefAttr::get(ctx, name)}));
    });
    for (gpu::GPUModuleOp m : llvm::drop_begin(gpuModules))
      m.erase();
  }
};

/// Splits reductions with few outputs and a long reduction (a loss, a
/// gradient norm's sum of squares: one output, millions of terms) in two:
/// kSplit partial results over interleaved elements, reduced in parallel,
/// then their sum. Mapped one thread per output, the long reduction would
/// run in a single thread. Several reduction dimensions, when adjacent, are
/// collapsed into one first.
struct SplitReductionsPass
    : PassWrapper<SplitReductionsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SplitReductionsPass)
  static constexpr int64_t kSplit = 1024;
  StringRef getArgument() const override { return "tessel-split-reductions"; }
  StringRef getDescription() const override {
    return "Long reductions with few outputs in two parallel steps (for GPUs)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<linalg::LinalgDialect, tensor::TensorDialect>();
  }

  /// The op with its reduction loops collapsed into one, or the op.
  static linalg::LinalgOp collapseReductions(IRRewriter &rw,
                                             linalg::LinalgOp op) {
    SmallVector<unsigned> dims;
    op.getReductionDims(dims);
    if (dims.size() < 2)
      return op;
    for (auto [a, b] : llvm::zip(dims, llvm::drop_begin(dims)))
      if (b != a + 1)
        return nullptr;
    ReassociationIndices group(dims.begin(), dims.end());
    rw.setInsertionPoint(op);
    FailureOr<linalg::CollapseResult> collapsed =
        linalg::collapseOpIterationDims(op, {group}, rw);
    if (failed(collapsed))
      return nullptr;
    rw.replaceOp(op, collapsed->results);
    return collapsed->collapsedOp;
  }

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
          op.getNumReductionLoops() == 0 || isa<linalg::ContractionOpInterface>(*op))
        return;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      int64_t parallel = 1, reduction = 1;
      for (auto [range, kind] : llvm::zip(ranges, op.getIteratorTypesArray())) {
        if (ShapedType::isDynamic(range))
          return;
        (kind == utils::IteratorType::reduction ? reduction : parallel) *=
            range;
      }
      if (parallel < 4096 && reduction >= 16 * kSplit)
        candidates.push_back(op);
    });
    IRRewriter rw(&getContext());
    for (linalg::LinalgOp op : candidates) {
      linalg::LinalgOp one = collapseReductions(rw, op);
      if (!one)
        continue;
      auto control = [](linalg::LinalgOp op) {
        SmallVector<unsigned> dims;
        op.getReductionDims(dims);
        int64_t size = op.getStaticLoopRanges()[dims.front()];
        int64_t ratio = kSplit;
        while (ratio > 1 && size % ratio != 0)
          ratio /= 2;
        return linalg::SplitReductionOptions{ratio < 16 ? 0 : ratio,
                                             unsigned(dims.front()),
                                             /*innerParallel=*/true};
      };
      rw.setInsertionPoint(one);
      (void)linalg::splitReduction(rw, one, control);
    }
  }
};

/// Runs every gpu.launch on the host: loops over its blocks and threads
/// around the body. With it, the GPU mapping (split reductions, flattened
/// launches, moved reduction loops) runs through the CPU backend and is
/// checked against the interpreter on machines without a GPU
/// (tessel-gpu-emulation-lowering).
struct GpuLaunchesToLoopsPass
    : PassWrapper<GpuLaunchesToLoopsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(GpuLaunchesToLoopsPass)
  StringRef getArgument() const override {
    return "tessel-gpu-launches-to-loops";
  }
  StringRef getDescription() const override {
    return "Each gpu.launch as host loops over its blocks and threads (to "
           "test the GPU mapping without a GPU)";
  }
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp l) { launches.push_back(l); });
    for (gpu::LaunchOp launch : launches) {
      Location loc = launch.getLoc();
      OpBuilder b(launch);
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      IRMapping map;
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      auto bindDims = [&](gpu::KernelDim3 args, gpu::KernelDim3 values) {
        map.map(args.x, values.x);
        map.map(args.y, values.y);
        map.map(args.z, values.z);
      };
      bindDims(launch.getGridSize(), grid);
      bindDims(launch.getBlockSize(), block);
      auto bx = scf::ForOp::create(b, loc, zero, grid.x, one);
      b.setInsertionPoint(bx.getBody()->getTerminator());
      auto tx = scf::ForOp::create(b, loc, zero, block.x, one);
      b.setInsertionPoint(tx.getBody()->getTerminator());
      bindDims(launch.getBlockIds(), {bx.getInductionVar(), zero, zero});
      bindDims(launch.getThreadIds(), {tx.getInductionVar(), zero, zero});
      for (Operation &op : launch.getBody().front().without_terminator())
        b.clone(op, map);
      launch.erase();
    }
  }
};

} // namespace

std::unique_ptr<Pass> mlir::tessel::createGpuLaunchesToLoopsPass() {
  return std::make_unique<GpuLaunchesToLoopsPass>();
}

std::unique_ptr<Pass> mlir::tessel::createSplitReductionsPass() {
  return std::make_unique<SplitReductionsPass>();
}

std::unique_ptr<Pass> mlir::tessel::createMergeGpuModulesPass() {
  return std::make_unique<MergeGpuModulesPass>();
}

std::unique_ptr<Pass> mlir::tessel::createMapLoopsToGpuPass() {
  return std::make_unique<MapLoopsToGpuPass>();
}
