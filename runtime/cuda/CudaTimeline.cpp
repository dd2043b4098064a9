//===- CudaTimeline.cpp - trace spans timed by CUDA events ----------------===//
//
// DeviceTimeline's clock on CUDA events: a mark is an event recorded on a
// stream; events are kept for reuse, so a traced step creates none once
// the first has run.
//
//===----------------------------------------------------------------------===//

#include "CudaTimeline.h"
#include "CudaCheck.h"

#include <cuda_runtime_api.h>

#include <vector>

using namespace tessel::rt;

namespace {

class CudaClock final : public DeviceClock {
public:
  ~CudaClock() override {
    // At thread exit; the CUDA runtime may be shutting down: no checks.
    for (cudaEvent_t e : spare)
      cudaEventDestroy(e);
  }
  Mark mark(void *stream) override {
    cudaEvent_t e = nullptr;
    if (spare.empty()) {
      cuda::check(cudaEventCreate(&e), "cudaEventCreate (--trace)");
    } else {
      e = spare.back();
      spare.pop_back();
    }
    cuda::check(cudaEventRecord(e, static_cast<cudaStream_t>(stream)),
                "cudaEventRecord (--trace)");
    return e;
  }
  bool reached(Mark m) override {
    cudaError_t status = cudaEventQuery(event(m));
    if (status == cudaErrorNotReady)
      return false;
    cuda::check(status, "a GPU operation (--trace)");
    return true;
  }
  void waitFor(Mark m) override {
    cuda::check(cudaEventSynchronize(event(m)), "a GPU operation (--trace)");
  }
  double elapsedUs(Mark from, Mark to) override {
    float ms = 0;
    cuda::check(cudaEventElapsedTime(&ms, event(from), event(to)),
                "cudaEventElapsedTime (--trace)");
    return double(ms) * 1000;
  }
  void release(Mark m) override { spare.push_back(event(m)); }

private:
  static cudaEvent_t event(Mark m) { return static_cast<cudaEvent_t>(m); }
  std::vector<cudaEvent_t> spare;
};

} // namespace

DeviceTimeline *cuda::timeline() {
  if (!currentRank().tracing)
    return nullptr;
  // Destroyed in reverse: the timeline (which gives its marks back) first.
  thread_local CudaClock clock;
  thread_local DeviceTimeline spans(clock);
  return &spans;
}
