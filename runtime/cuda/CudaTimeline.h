//===- CudaTimeline.h - trace spans timed by CUDA events --------*- C++ -*-===//

#ifndef TESSEL_RUNTIME_CUDA_CUDATIMELINE_H
#define TESSEL_RUNTIME_CUDA_CUDATIMELINE_H

#include "../cpu/DeviceTimeline.h"

namespace tessel::rt::cuda {

/// This rank's (thread's) timeline on CUDA events, or null when the run
/// does not trace (--trace).
DeviceTimeline *timeline();

} // namespace tessel::rt::cuda

#endif // TESSEL_RUNTIME_CUDA_CUDATIMELINE_H
