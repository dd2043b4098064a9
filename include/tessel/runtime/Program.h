//===- Program.h - what a compiled program says about itself ----*- C++ -*-===//
//
// tessel-compile embeds a JSON description in every executable (the
// `tessel_program` symbol of runtime/Abi.h); the runtime reads it to know the
// mesh, and each argument's and result's name, type, sharding and
// initialization. The format:
//
//   {"function": "train_step", "mesh": {"axes": ["dp", "tp"], "sizes": [2, 2]},
//    "arguments": [{"name": "wte.weight", "dtype": "f32",
//                   "shape": [64, 128], "global_shape": [128, 128],
//                   "dims": [["tp"], []], "init": "normal:0.02"}, ...],
//    "results": [ same fields but "init" ],
//    "target": {"triple": "x86_64-pc-linux-gnu", "cpu": "x86-64-v3",
//               "requested": "x86-64-v3", "features": ["avx", "avx2", ...]}}
//
// "shape" is the per-device block: each dimension is ceil(global / devices
// splitting it); the padding of uneven dimensions is zero on input.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_PROGRAM_H
#define TESSEL_RUNTIME_PROGRAM_H

#include "tessel/runtime/CpuFeatures.h"
#include "tessel/support/DType.h"
#include "tessel/support/HostTensor.h"
#include "tessel/support/Mesh.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tessel::rt {

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  Shape shape, globalShape;
  std::vector<std::vector<std::string>> dims; ///< mesh axes per dimension
  std::string init;                           ///< arguments only

  int64_t bytes() const { return numElements(shape) * byteSize(dtype); }
};

struct Program {
  std::string function;
  MeshShape mesh;
  std::vector<TensorInfo> arguments, results;
  CpuTarget target; ///< empty for programs described before compilation
};

llvm::Expected<Program> parseProgram(llvm::StringRef json);
std::string printProgram(const Program &program);

/// Copies `device`'s block of the global tensor into `local` (raw bytes of
/// `info`'s local shape), zero in padding.
void sliceBlock(const HostTensor &global, const TensorInfo &info,
                const MeshShape &mesh, int64_t device, uint8_t *local);
/// The same from the raw bytes of the global tensor (same dtype as `info`),
/// e.g. a mapped safetensors file: only the block's bytes are read.
void sliceBlockBytes(const uint8_t *global, const TensorInfo &info,
                     const MeshShape &mesh, int64_t device, uint8_t *local);
/// Writes `device`'s block `local` into `global` (skipping padding).
void placeBlock(const uint8_t *local, const TensorInfo &info,
                const MeshShape &mesh, int64_t device, HostTensor &global);

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_PROGRAM_H
