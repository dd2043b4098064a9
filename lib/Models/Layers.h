//===- Layers.h - layers shared by the built-in models ----------*- C++ -*-===//

#ifndef TESSEL_LIB_MODELS_LAYERS_H
#define TESSEL_LIB_MODELS_LAYERS_H

#include "Emitter.h"

#include "tessel/models/Models.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace mlir::tessel::models {

llvm::Error fail(const Twine &message);
/// The initializer string of a normal(0, std) parameter.
std::string normal(double std);
/// Causal self-attention on q/k/v [B, S, heads, hd]; returns
/// [B, S, heads * hd].
Value attend(Emitter &e, Value q, Value k, Value v);
/// cos and sin of the rotary angles, [S, hd] each.
struct RotaryTables {
  Value cos, sin;
};
/// The tables for S positions and head dimension hd, computed in the
/// program from iota as Hugging Face computes them (the IR holds hd/2
/// frequencies, not S x hd values), in full precision.
RotaryTables rotaryTables(Emitter &e, int64_t S, int64_t hd, double theta);
/// Rotary embedding (Hugging Face's rotate_half form) of x [B, S, n, hd].
Value rotary(Emitter &e, Value x, const RotaryTables &tables);
/// Mean cross-entropy of logits [B, S, V] against labels [B, S].
Value loss(Emitter &e, Value logits, Value targets);
/// RMS norm over the last dimension with the weight named `name`.
Value rmsNorm(Emitter &e, Value v, StringRef name);
/// Llama's SwiGLU FFN (`prefix` + mlp.{gate,up,down}_proj) of width F.
Value llamaMlp(Emitter &e, Value m, StringRef prefix, int64_t F);

/// Layer `layer`'s feed-forward block on the normed activations m
/// [B, S, H], its parameters named under `prefix` ("model.layers.N.").
using FeedForward =
    llvm::function_ref<Value(Value m, StringRef prefix, int64_t layer)>;
/// Llama's decoder (embedding, attention + `ffn` layers, final norm, head)
/// with its data arguments; returns the mean cross-entropy.
Value llamaDecoder(Emitter &e, const ModelConfig &c, const FeedForward &ffn);

/// Mixtral: Llama attention with mixture-of-experts FFNs (Moe.cpp).
llvm::Error buildMixtral(Emitter &e, const ModelConfig &c);

} // namespace mlir::tessel::models

#endif // TESSEL_LIB_MODELS_LAYERS_H
