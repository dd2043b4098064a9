//===- Lowering.h - tessel to linalg, LLVM and object code -------*- C++
//-*-===//
//
// Lowering. `populateTesselToLinalgPatterns` rewrites every tessel op of a
// per-device program but the device-specific ones into linalg / tensor /
// arith / math on tensors, the same for every target; a target
// (tessel/lowering/Target.h) lowers matmuls and communication. The CPU
// target makes them calls into OpenBLAS and libtessel_rt (runtime/Abi.h).
// `buildCpuLoweringPipeline` takes that to the LLVM dialect (fusion, one-shot
// bufferization, loops, LLVM); `tessel-export-entry` and `tessel-emit-entry`
// frame it with the runtime entry point and the program description, and
// `writeObjectFile` makes the object file.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LOWERING_LOWERING_H
#define TESSEL_LOWERING_LOWERING_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::tessel {

/// Patterns that lower tessel ops to linalg/tensor/arith/math, for every
/// target (element-wise ops, data movement, reductions, normalizations,
/// indexing): all but dot_general, the collectives, send/recv and
/// axis_index, which the target's patterns lower.
void populateTesselToLinalgPatterns(RewritePatternSet &patterns);
/// The part of the above for neural-network ops (softmax, norms,
/// cross-entropy).
void populateTesselNNToLinalgPatterns(RewritePatternSet &patterns);
/// The part for index-driven ops (gather, scatter_add, one_hot, cumsum,
/// top_k, dropout_mask).
void populateTesselIndexingToLinalgPatterns(RewritePatternSet &patterns);
/// The CPU target's patterns: dot_general to OpenBLAS (16-bit floats
/// widened to f32), collectives, send/recv and axis_index to libtessel_rt.
void populateCpuDevicePatterns(RewritePatternSet &patterns);
/// After a target's patterns: each collective call with compute between it
/// and the first op that reads its result or communicates becomes
/// tessel_rt_collective_start_* and a wait placed there (runtime/Abi.h),
/// so the program computes while the collective is in flight.
void splitCollectives(ModuleOp module);
/// The wrappers of split collectives' starts and waits are named so.
constexpr llvm::StringLiteral kCollectiveStartWrapper =
    "__tessel_call_tessel_rt_collective_start_";
constexpr llvm::StringLiteral kCollectiveWaitWrapper =
    "__tessel_call_tessel_rt_collective_wait_";
/// After one-shot bufferization: each split collective's wait gets the
/// buffer its start read (where the operand was a strided view, each call
/// got a copy of its own; the start's must live until the wait).
std::unique_ptr<Pass> createShareCollectiveInputsPass();

/// Registers every dialect and interface the CPU pipeline needs.
void registerCpuLoweringDialects(DialectRegistry &registry);

/// After --tessel-lower-to-linalg: fuse, bufferize, lower to the LLVM dialect
/// (the registered pipeline `tessel-cpu-lowering`).
LogicalResult buildCpuLoweringPipeline(OpPassManager &pm);
/// The part every target shares: element-wise fusion, one-shot
/// bufferization, results as out-parameters, deallocation, copies as linalg.
LogicalResult buildBufferizePipeline(OpPassManager &pm);
/// Scalar math every target does alike: bf16/f16 arithmetic in f32,
/// conversions as integer code, exp/log/tanh/erf as polynomials.
LogicalResult buildScalarMathPipeline(OpPassManager &pm);

/// The `cuda` target's patterns: dot_general to cuBLASLt through
/// libtessel_rt (bf16/f16 kept), communication as on the CPU.
void populateCudaDevicePatterns(RewritePatternSet &patterns);
/// Registers the GPU and NVVM translations and the `tessel-cuda-lowering`
/// pipeline (options `chip`, `toolkit`) and its passes.
void registerCudaPipeline(DialectRegistry &registry);
/// Each top-level loop nest of a host function as one gpu.launch
/// (lib/Lowering/MapLoopsToGpu.cpp).
std::unique_ptr<Pass> createMapLoopsToGpuPass();
/// After gpu-kernel-outlining: every kernel in one gpu.module, identical
/// ones once.
std::unique_ptr<Pass> createMergeGpuModulesPass();
/// Long reductions with few outputs in two parallel steps (before
/// bufferization; for GPUs).
std::unique_ptr<Pass> createSplitReductionsPass();
/// Each gpu.launch as host loops (to test the GPU mapping without a GPU).
std::unique_ptr<Pass> createGpuLaunchesToLoopsPass();
/// The CPU pipeline's last part: loops, memrefs, arith, math and functions
/// to the LLVM dialect.
LogicalResult buildHostToLLVMPipeline(OpPassManager &pm);
/// Its conversions of host code to the LLVM dialect (math, memrefs, arith,
/// functions, control flow, index), which GPU targets share.
llvm::StringRef hostConversionsToLLVM();

/// Registers the passes of the CPU pipeline and the pipelines
/// `tessel-cpu-lowering` and `tessel-cpu-pipeline{cpu=NAME function=NAME}`
/// (export the entry, lower to linalg, `tessel-cpu-lowering`, emit the
/// entry): what tessel-compile runs from a partitioned program to the LLVM
/// dialect module that mlir-translate --mlir-to-llvmir translates.
void registerCpuPipeline();

/// `tessel-export-entry{function= cpu=}` and `tessel-emit-entry`
/// (lib/Lowering/EntryPoint.cpp).
std::unique_ptr<Pass> createExportEntryPass();
std::unique_ptr<Pass> createEmitEntryPass();
void registerEntryPointPasses();

/// Rewrites every conversion to or from bf16/f16 into integer code (round to
/// nearest even, NaN/Inf/denormals kept), so no CPU's instructions or
/// toolchain's runtime library decide the bits.
std::unique_ptr<Pass> createExpandFloatConversionsPass();

/// The runtime function a `tessel.region` mark becomes (runtime/Abi.h).
constexpr llvm::StringLiteral kRegionFunction = "tessel_rt_region";
/// On a memref.dealloc of a function's argument: the caller handed the
/// buffer over (its last use is this call), so FreeAfterLastUse may move the
/// free up to the argument's last use.
constexpr llvm::StringLiteral kOwnedArgument = "tessel_owned_argument";

/// Element-wise fusion (upstream's patterns) that never fuses across the
/// schedule actions of a pipeline stage (lib/Lowering/FuseElementwise.cpp).
std::unique_ptr<Pass> createFuseElementwisePass();

/// Moves each dealloc up to just after the buffer's last use in its block
/// (lib/Lowering/FreeAfterLastUse.cpp): a step's peak memory is then what is
/// live at once, not every temporary it makes.
std::unique_ptr<Pass> createFreeAfterLastUsePass();

/// Cuts functions of more than 400 top-level ops into calls of private
/// functions of 400 ops each, before bufferization, whose cost grows faster
/// than the ops of one function (lib/Lowering/OutlineSegments.cpp).
std::unique_ptr<Pass> createOutlineSegmentsPass();
/// Around the deallocation pipeline, for functions cut into pieces: their
/// buffers are hidden from it as tagged allocas (its simplification is
/// quadratic in the buffers of a block), then become allocations again,
/// freed by the piece that reads them last (a dealloc of its argument
/// marked kOwnedArgument) or at the end of the block
/// (lib/Lowering/OutlineSegments.cpp).
std::unique_ptr<Pass> createHideCallerBuffersPass();
std::unique_ptr<Pass> createFreeCallerBuffersPass();

struct CpuSelection; // tessel/lowering/CpuTarget.h

/// Translates the LLVM-dialect module `tessel-cpu-pipeline` made to LLVM IR
/// (what `mlir-translate --mlir-to-llvmir` gives).
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context);

/// Loads and stores bf16/f16 values (and vectors of them) as 16-bit
/// integers, so code generation never holds one promoted to f32 and calls a
/// toolchain conversion routine to store it (lib/Lowering/HalfWordMoves.cpp).
/// optimizeLLVMIR runs it last.
void moveHalfWordsAsIntegers(llvm::Module &module);

/// Host functions of at least this many LLVM instructions are compiled
/// apart by default (see splitLargeHostFunctions).
constexpr unsigned kDefaultLargeHostFunction = 2000;

/// Moves the host functions (not kernels) of `module` with at least
/// `threshold` instructions (0: none) into a module of their own, returned
/// (null if there are none); `module` keeps declarations of them, and what
/// they reference becomes external with hidden visibility, so the two
/// objects link together. A step's entry code is calls in sequence, run
/// once per step, while LLVM's optimizer and code generator grow faster
/// than linearly with a function's size: tessel-compile writes the host
/// module without optimization (instruction selection and register
/// allocation at -O0, linear in its size).
std::unique_ptr<llvm::Module> splitLargeHostFunctions(llvm::Module &module,
                                                      unsigned threshold);

/// LLVM's optimization pipeline at `optLevel` for `cpu`.
llvm::Error optimizeLLVMIR(llvm::Module &module, const CpuSelection &cpu,
                           unsigned optLevel);

/// Writes `module` as a native object file for `cpu`.
llvm::Error writeObjectFile(llvm::Module &module, const std::string &path,
                            const CpuSelection &cpu, unsigned optLevel);

} // namespace mlir::tessel

#endif // TESSEL_LOWERING_LOWERING_H
