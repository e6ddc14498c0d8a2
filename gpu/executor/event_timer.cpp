#include "gpu/executor/event_timer.h"

#include <nvtx3/nvToolsExt.h>

#include "gpu/device/cuda_check.h"

namespace pipelab::gpu {
namespace {

// cudaEventElapsedTime's milliseconds as a steady_clock duration.
std::chrono::steady_clock::duration from_ms(float ms) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double, std::milli>(ms));
}

}  // namespace

EventClock::EventClock(cudaStream_t stream) {
  PIPELAB_CUDA_CHECK(cudaEventCreate(&reference_));
  calibrate(stream);
}

EventClock::~EventClock() { PIPELAB_CUDA_WARN(cudaEventDestroy(reference_)); }

void EventClock::calibrate(cudaStream_t stream) {
  PIPELAB_CUDA_CHECK(cudaStreamSynchronize(stream));  // so the reference completes at once
  PIPELAB_CUDA_CHECK(cudaEventRecord(reference_, stream));
  PIPELAB_CUDA_CHECK(cudaEventSynchronize(reference_));
  reference_host_ = std::chrono::steady_clock::now();
}

HostTime EventClock::host_time(cudaEvent_t event) const {
  PIPELAB_CUDA_CHECK(cudaEventSynchronize(event));
  float ms = 0.0f;
  PIPELAB_CUDA_CHECK(cudaEventElapsedTime(&ms, reference_, event));
  return reference_host_ + from_ms(ms);
}

EventTimer::EventTimer() {
  PIPELAB_CUDA_CHECK(cudaEventCreate(&begin_));
  try {
    PIPELAB_CUDA_CHECK(cudaEventCreate(&end_));
  } catch (...) {
    PIPELAB_CUDA_WARN(cudaEventDestroy(begin_));
    throw;
  }
}

EventTimer::~EventTimer() {
  PIPELAB_CUDA_WARN(cudaEventDestroy(begin_));
  PIPELAB_CUDA_WARN(cudaEventDestroy(end_));
}

void EventTimer::begin(cudaStream_t stream, const std::string& name) {
  nvtxRangePushA(name.c_str());
  PIPELAB_CUDA_CHECK(cudaEventRecord(begin_, stream));
}

void EventTimer::end(cudaStream_t stream) {
  PIPELAB_CUDA_CHECK(cudaEventRecord(end_, stream));
  nvtxRangePop();
}

bool EventTimer::ready() const {
  const cudaError_t status = cudaEventQuery(end_);
  if (status == cudaErrorNotReady) {
    // "Not ready" is an answer, not a failure: make sure it is not left as the
    // thread's last error for the next launch check to find.
    const cudaError_t last = cudaGetLastError();
    if (last != cudaErrorNotReady) PIPELAB_CUDA_CHECK(last);
    return false;
  }
  PIPELAB_CUDA_CHECK(status);
  return true;
}

float EventTimer::elapsed_ms() const {
  PIPELAB_CUDA_CHECK(cudaEventSynchronize(end_));
  float ms = 0.0f;
  PIPELAB_CUDA_CHECK(cudaEventElapsedTime(&ms, begin_, end_));
  return ms;
}

HostInterval EventTimer::resolve(const EventClock& clock) const {
  return {clock.host_time(begin_), clock.host_time(end_)};
}

NvtxRange::NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }

NvtxRange::~NvtxRange() { nvtxRangePop(); }

}  // namespace pipelab::gpu
