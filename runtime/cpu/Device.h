//===- Device.h - what the runtime asks of the device it runs on -*- C++ -*-===//
//
// The runtime (flags, the program description, ranks, steps, checkpoints,
// communication) is the same for every target; the device its compiled code
// runs on differs in a few things, declared here and implemented once per
// target: HostDevice.cpp (CPUs) and runtime/cuda/CudaDevice.cpp (NVIDIA
// GPUs). tessel-compile links the target's implementation.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_DEVICE_H
#define TESSEL_RUNTIME_DEVICE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tessel/runtime/Bootstrap.h"
#include "tessel/runtime/Communicator.h"
#include "tessel/runtime/CustomCall.h"

#include <chrono>
#include <functional>

namespace tessel::rt {

/// Whether the device has a collective library of its own (NCCL), through
/// which ranks a launcher started one process per device communicate
/// (runProcessRank); the CPU's processes communicate through MPI instead.
bool deviceHasCommunicator();

/// Runs `body` as this process's rank of a run the launcher started one
/// process per device (`info`): binds the device, meets the other ranks,
/// builds the device library's communicator. Returns the rank's result (1
/// with a message when the run cannot start).
int runProcessRank(const LaunchInfo &info, std::chrono::seconds timeout,
                   const std::function<int(Communicator &)> &body);

/// Before any rank starts: `localRanks` ranks run on this machine (threads
/// of this process, or processes of mpirun), each with `threads` host
/// threads for its library calls (0: the device's choice). Returns why this
/// machine cannot run them ("" when it can).
std::string prepareDevices(int64_t localRanks, int64_t threads);

/// On a rank's own thread, before anything else: binds it to the device of
/// local rank `localRank`. Returns why it cannot ("" when it can).
std::string bindRankDevice(int64_t localRank);

/// Memory that compiled code and the runtime both address, 64-byte aligned
/// (null when there is none left); freed with freeDeviceMemory.
void *allocateDeviceMemory(size_t bytes);
void freeDeviceMemory(void *p);

/// The most bytes of compiled-program buffers (Allocator.cpp) this thread
/// (rank) has held at once: activations, gradients, temporaries; not the
/// arguments and results the runtime keeps.
size_t peakBufferBytes();

/// Runs custom-call kernel `name` (tessel/runtime/CustomCall.h) on
/// `buffers` (its inputs, then its outputs): the CPU entry NAME, or on a
/// GPU tessel_cuda_NAME on the rank's stream, done when this returns.
/// Returns why it could not run or failed ("" when it ran).
std::string runCustomKernel(const std::string &name,
                            const std::vector<TesselBuffer> &buffers,
                            int32_t numInputs, const std::string &config);

/// With --trace, before this rank's events are written: adds the spans the
/// device timed on its own clock and has not yet reported, waiting for
/// them (GPUs: CUDA events, DeviceTimeline.h; nothing on CPUs).
void finishDeviceTrace();

/// The device, for the run's header ("cpu", "NVIDIA H200 (sm_90)").
std::string deviceDescription();
/// The dense matmul peak (FLOP/s) of this rank's device for matmuls of 16-bit
/// inputs (`half`) or f32 ones, for the model FLOPs utilization; 0 where it
/// is not known (CPUs: --peak-tflops gives it).
double devicePeakFlops(bool half);

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_DEVICE_H
