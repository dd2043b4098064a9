//===- HuggingFace.h - parameters from Hugging Face checkpoints --*- C++ -*-===//
//
// Where --init-from finds a parameter that a Hugging Face file stores under
// another name or layout. GPT-2 (`GPT2LMHeadModel.save_pretrained`):
//   transformer.NAME                    -> NAME (wte, ln_f, h.N.ln_1, ...)
//   transformer.h.N.attn.c_attn.weight  -> h.N.attn.{q,k,v}_proj.weight,
//     [H, 3H] (Conv1D: input rows, output columns), the q, k and v thirds
//     of its columns; .bias [3H] likewise
//   transformer.wpe.weight [1024, H]    -> wpe.weight [S, H], its first S rows
//   transformer.h.N.attn.bias / .masked_bias (the causal-mask buffers) and
//   lm_head.weight (tied to wte)        -> nothing; known, not loaded
// Conv1D stores [in, out], the layout of Tessel's weights, so nothing is
// transposed.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_CPU_HUGGINGFACE_H
#define TESSEL_RUNTIME_CPU_HUGGINGFACE_H

#include "tessel/program/Program.h"
#include "tessel/support/SafeTensors.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tessel::rt {

/// A parameter found in a file: where its bytes are (in the mapped file
/// when they are contiguous there, else in `bytes`), and the file's
/// tensors it was read from (none: the file does not hold it).
struct AssembledTensor {
  const uint8_t *mapped = nullptr;
  std::vector<uint8_t> bytes;
  std::vector<std::string> from;
};

/// Whether `file` is a Hugging Face GPT-2 checkpoint (it has
/// transformer.wte.weight).
bool isGpt2File(const MappedSafeTensors &file);

/// `info` from a GPT-2 file, where it holds it under its GPT-2 name; an
/// empty result where it does not; an error naming the tensor where its
/// type does not fit.
llvm::Expected<AssembledTensor> gpt2Parameter(const MappedSafeTensors &file,
                                              const program::TensorInfo &info);

/// Tensors of a GPT-2 file that are not parameters (causal-mask buffers,
/// the tied LM head).
bool isGpt2Buffer(llvm::StringRef name);

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_CPU_HUGGINGFACE_H
