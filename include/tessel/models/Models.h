//===- Models.h - tessel-dialect model builders ------------------*- C++ -*-===//
//
// Builds `@forward(params..., inputs, targets) -> loss` for a small set of
// reference models. Every parameter carries `tessel.name` (Hugging Face's name
// where one exists), `tessel.logical_axes` and `tessel.init`; the residual
// stream carries `tessel.logical_axes` on the op that produces it, so that a
// rules file can place activations too (sequence parallelism).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_MODELS_MODELS_H
#define TESSEL_MODELS_MODELS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::tessel::models {

struct ModelConfig {
  std::string kind = "gpt"; ///< mlp | gpt | llama | moe
  int64_t layers = 2;
  int64_t hidden = 128;
  int64_t heads = 4;
  int64_t kvHeads = 0;  ///< 0: same as heads
  int64_t ffn = 0;      ///< 0: 4 * hidden (gpt, mlp) or Llama's 8/3 rule
  int64_t vocab = 256;  ///< classes for mlp with cross-entropy
  int64_t seq = 64;
  int64_t batch = 4;
  std::string dtype = "f32"; ///< f32 | bf16 | f16 | f64
  bool tiedEmbeddings = true; ///< gpt default tied; llama default untied
  std::string loss = "ce";    ///< mlp: ce | mse
  std::vector<int64_t> widths; ///< mlp: explicit layer widths (in .. out)
  double ropeTheta = 10000.0;
  /// Dropout probability (GPT-2's 0.1) of the embeddings, the attention
  /// probabilities and each residual branch (mlp: each hidden activation);
  /// 0: none.
  double dropout = 0.0;
  // moe (Mixtral-shaped: Llama attention, routed SwiGLU experts).
  int64_t experts = 8;
  int64_t topK = 2;          ///< experts per token (1: Switch, 2: Mixtral)
  double capacityFactor = 1.25;
  double auxLoss = 0.01;     ///< load-balancing loss coefficient
  double zLoss = 0.001;      ///< router z-loss coefficient
  int64_t moeEvery = 1;      ///< every N-th layer is MoE, the others dense
};

/// Builds the model into a new module. Errors describe the bad option.
llvm::Expected<OwningOpRef<ModuleOp>> buildModel(MLIRContext *context,
                                                 const ModelConfig &config);

} // namespace mlir::tessel::models

#endif // TESSEL_MODELS_MODELS_H
