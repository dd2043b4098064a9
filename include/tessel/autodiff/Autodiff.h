//===- Autodiff.h - reverse-mode automatic differentiation -------*- C++ -*-===//
//
// Each op's vector-Jacobian product is its VjpOpInterface rule
// (dialects/tessel/Vjp.cpp); buildGradient runs them backward over a
// function.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_AUTODIFF_AUTODIFF_H
#define TESSEL_AUTODIFF_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::tessel {

/// Emits the cotangents of `op`'s operands given its results' cotangents
/// (null where a result has none). `operandCotangents` gets one entry per
/// operand, null where the operand gets none (integers, predicates).
/// Fails with a diagnostic on `op` if it has no rule.
LogicalResult buildVjp(OpBuilder &builder, Operation *op,
                       ArrayRef<Value> resultCotangents,
                       SmallVectorImpl<Value> &operandCotangents);

/// Which forward activations the backward recomputes instead of keeping.
enum class Recompute {
  None,
  /// Every op tagged `tessel.layer = N` (full recomputation: only the
  /// inputs of each layer stay live between forward and backward).
  Layers,
  /// Ops tagged `tessel.recompute = "group"`, one region per layer and
  /// group (selective recomputation, e.g. Megatron's attention core).
  Tagged,
};

/// Parses none | layers | tagged.
std::optional<Recompute> parseRecompute(StringRef name);

struct GradientOptions {
  Recompute recompute = Recompute::None;
  /// The backward reads a sharded parameter (one with a `tessel.sharding`
  /// that splits some dimension), and its casts, through a fresh identity
  /// `tessel.sharding_constraint`, so partitioning gathers it again rather
  /// than keeping the forward's gathered copy live: FSDP's
  /// reshard-after-forward, ZeRO-3's communication of 1.5x data parallelism.
  bool reshardAfterForward = true;
};

/// Builds `@name(args...) -> (loss, d loss / d arg for each float argument)`
/// from `forward`, whose first result is the scalar loss. Every op gets a
/// `tessel.role`; backward ops inherit their forward op's `tessel.stage` and
/// `tessel.layer`.
FailureOr<func::FuncOp> buildGradient(func::FuncOp forward, StringRef name,
                                      const GradientOptions &options = {});

/// The optimizer and schedule of a training step.
struct TrainStepOptions {
  enum class Optimizer { SGD, AdamW };
  Optimizer optimizer = Optimizer::AdamW;
  double lr = 1e-3;
  /// Linear warm-up over this many steps, then cosine decay to
  /// `lr * minLrRatio` at `totalSteps` (no decay when totalSteps is 0).
  int64_t warmupSteps = 0;
  int64_t totalSteps = 0;
  double minLrRatio = 0.1;
  double momentum = 0.9; // SGD
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8; // AdamW
  /// Decoupled weight decay, applied to parameters of rank >= 2 only
  /// (norm scales and biases are not decayed).
  double weightDecay = 0.0;
  /// Whether embedding tables (parameters a `tessel.gather` reads as its
  /// table) are decayed too; false leaves them out, as Hugging Face's
  /// no-decay lists for embeddings do.
  bool decayEmbeddings = true;
  /// Global-norm clipping threshold; 0 disables clipping.
  double clipNorm = 0.0;
  /// Take the peak learning rate from an f32 scalar argument `lr` (just
  /// before `step`, initialized to `lr`) instead of a constant, so a
  /// compiled program's --lr can change it.
  bool lrArgument = false;
  /// Gradient accumulation: a slot `<opt>.accum.<param>` holds the running
  /// gradient sum, and scalar arguments `apply` (i32) and `grad_scale` (f32)
  /// say whether this micro-step updates the parameters (with the sum times
  /// grad_scale) or only adds to the sum. The runtime drives them
  /// (--batch-size a multiple of the compiled batch).
  bool accumulate = false;
  /// Mixed precision: when set (bf16 or f16), f32 compute runs in this type
  /// while parameters, optimizer state, gradients, softmax, norms, sums and
  /// the loss stay f32 (see castCompute).
  Type computeType;
  /// With computeType: the backward reads activations in computeType where
  /// the forward has them in it (narrowSavedActivations); false keeps the
  /// f32 values live instead (save-f32-activations=true).
  bool narrowSaved = true;
  GradientOptions gradient;
  /// Arguments that are data rather than parameters, by tessel.name. Integer
  /// arguments and arguments with a "batch" logical axis are always data.
  SmallVector<std::string> batchNames;
};

/// Builds `@name(params..., opt_state..., batch..., step) -> (new params...,
/// new opt_state..., loss, grad_norm)` from `forward`, whose first result is
/// the scalar loss. `step` (i32, 0 for the first update) drives the
/// learning-rate schedule and AdamW's bias correction. Optimizer state
/// arguments are named `<opt>.<slot>.<param>` and carry their parameter's
/// sharding and logical axes.
FailureOr<func::FuncOp> buildTrainStep(func::FuncOp forward, StringRef name,
                                       const TrainStepOptions &options);

/// Builds `@name`, a copy of `forward` whose f32 compute runs in
/// `computeType` (bf16 or f16): arguments are converted where used, and
/// softmax, layer/RMS norms, cross-entropy, sums, means and cumulative sums
/// run in f32 on converted operands (autocast's f32 list), as does
/// everything the loss result is computed from after them.
FailureOr<func::FuncOp> castCompute(func::FuncOp forward, StringRef name,
                                    Type computeType);

/// Stores the activations a mixed-precision backward reads in the low type
/// (`low`, bf16 or f16), as trainers that run the model in bf16 do: where the
/// backward of `grad` (a buildGradient result) reads an f32 forward value
/// that is a conversion of a low-type value, or that the forward also
/// converts to the low type, it reads a fresh f32 conversion of that
/// low-type value instead (role "recompute"), so only the half-size copy
/// stays live between forward and backward. A softmax's probabilities reach
/// its VJP rounded to the low type; f32 values without a low-type copy (norm
/// statistics, the loss) are kept as they are.
void narrowSavedActivations(func::FuncOp grad, Type low);

/// A cheap forward value of `grad` that the backward reads is made again in
/// the backward (role "recompute") instead of being kept: a broadcast whose
/// operand is at most a quarter of its result (an attention mask broadcast
/// over batch and heads, a bias over tokens), a splat constant (a scale), an
/// iota. The forward's copy is freed after its last forward use.
void rematerializeCheapValues(func::FuncOp grad);

} // namespace mlir::tessel

#endif // TESSEL_AUTODIFF_AUTODIFF_H
