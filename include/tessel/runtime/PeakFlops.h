//===- PeakFlops.h - dense matmul peaks of known GPUs -----------*- C++ -*-===//
//
// The denominator of the model FLOPs utilization the runtime prints (MFU,
// as PaLM and Megatron-LM define it): the dense (not 2:4 sparse) matmul
// peak of the GPU a rank runs on, from its name as the CUDA driver reports
// it. A GPU not in the table has no peak; `--peak-tflops` gives one (and
// overrides the table).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_PEAKFLOPS_H
#define TESSEL_RUNTIME_PEAKFLOPS_H

#include <string>

namespace tessel::rt {

/// What the matmuls multiply: bf16/f16 on tensor cores, f32 as tf32 on
/// tensor cores (TESSEL_ALLOW_TF32=1), or f32 on the CUDA cores.
enum class MatmulPrecision { Half, TF32, F32 };

/// FLOP/s; 0 for a GPU the table does not know.
double gpuPeakFlops(const std::string &deviceName, MatmulPrecision precision);

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_PEAKFLOPS_H
