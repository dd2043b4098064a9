//===- Target.h - the registry of backends ----------------------*- C++ -*-===//
//
// Lowering is shared up to linalg on tensors: every tessel op but the
// device-specific ones becomes linalg, tensor, arith and math the same way
// for every backend (populateTesselToLinalgPatterns). A target supplies the
// rest: how matmuls (dot_general), collectives, send/recv and axis_index
// become calls on its device (the CPU: OpenBLAS and libtessel_rt; a GPU:
// cuBLASLt and NCCL), and the registered pipeline that takes linalg on
// tensors to its code. A target is free to widen types (the CPU's BLAS runs
// bf16 matmuls in f32); the shared lowering never does.
//
// Adding a target is registering one: `tessel-lower-to-linalg{target=NAME}`
// and `tessel-compile --target NAME` find it here.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LOWERING_TARGET_H
#define TESSEL_LOWERING_TARGET_H

#include "mlir/IR/PatternMatch.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir::tessel {

struct Target {
  std::string name;
  std::string description;
  /// Patterns for the device-specific ops: dot_general, the collectives,
  /// send, recv and axis_index.
  std::function<void(RewritePatternSet &)> populateDevicePatterns;
  /// The registered pass pipeline from linalg on tensors (after
  /// tessel-lower-to-linalg{target=NAME}) to the target's IR.
  std::string loweringPipeline;
  /// Whether the pipeline takes the GPU architecture (`{chip=sm_90}`).
  bool takesGpuArch = false;
};

/// Adds (or replaces) a target. The built-in ones (`cpu`) are registered
/// on first lookup.
void registerTarget(Target target);
/// The target `name`, or null.
const Target *lookupTarget(llvm::StringRef name);
/// The registered targets' names, sorted, comma-separated (for messages).
std::string listTargets();

} // namespace mlir::tessel

#endif // TESSEL_LOWERING_TARGET_H
