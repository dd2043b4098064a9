//===- Lowering.h - tessel to linalg, LLVM and object code -------*- C++
//-*-===//
//
// The CPU backend. `populateTesselToLinalgPatterns` rewrites every tessel op
// of a per-device program into linalg / tensor / arith / math on tensors,
// with matmuls and collectives as calls into libtessel_rt (runtime/Abi.h).
// `buildCpuLoweringPipeline` takes that to the LLVM dialect (fusion, one-shot
// bufferization, loops, LLVM), and `emitObject` to an object file with the
// runtime entry point and the program description the runtime reads.
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

/// Patterns that lower tessel ops to linalg/tensor/arith/math and runtime
/// calls (element-wise ops, data movement, reductions, normalizations).
void populateTesselToLinalgPatterns(RewritePatternSet &patterns);
/// The part of the above for neural-network ops (softmax, norms,
/// cross-entropy).
void populateTesselNNToLinalgPatterns(RewritePatternSet &patterns);
/// The part for index-driven ops (gather, scatter_add, one_hot, cumsum,
/// top_k, dropout_mask).
void populateTesselIndexingToLinalgPatterns(RewritePatternSet &patterns);
/// The part for dot_general (BLAS) and collectives (runtime).
void populateTesselRuntimeCallPatterns(RewritePatternSet &patterns);

/// Registers every dialect and interface the CPU pipeline needs.
void registerCpuLoweringDialects(DialectRegistry &registry);

/// After --tessel-lower-to-linalg: fuse, bufferize, lower to the LLVM dialect.
LogicalResult buildCpuLoweringPipeline(OpPassManager &pm);

/// Rewrites every conversion to or from bf16/f16 into integer code (round to
/// nearest even, NaN/Inf/denormals kept), so no CPU's instructions or
/// toolchain's runtime library decide the bits.
std::unique_ptr<Pass> createExpandFloatConversionsPass();

struct CpuSelection; // tessel/lowering/CpuTarget.h

/// The memref shape of each argument of `func` (then each result), recorded
/// before bufferization turns results into trailing arguments.
struct EntrySignature {
  std::string function;
  std::vector<std::vector<int64_t>> buffers; // shapes, arguments then results
};

/// Translates an LLVM-dialect module to LLVM IR, adds `tessel_entry` (one
/// pointer per buffer of `signature`) and the program description `json`,
/// and optimizes at `optLevel` for `cpu`.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                  const EntrySignature &signature, const std::string &json,
                  const CpuSelection &cpu, unsigned optLevel);

/// Writes `module` as a native object file for `cpu`.
llvm::Error writeObjectFile(llvm::Module &module, const std::string &path,
                            const CpuSelection &cpu, unsigned optLevel);

} // namespace mlir::tessel

#endif // TESSEL_LOWERING_LOWERING_H
