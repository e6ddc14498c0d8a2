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
  try {
    PIPELAB_CUDA_CHECK(cudaEventCreate(&anchor_));
    for (cudaEvent_t& event : samples_) PIPELAB_CUDA_CHECK(cudaEventCreate(&event));
    anchor_host_ = sample(stream);
  } catch (...) {
    release();
    throw;
  }
  std::swap(anchor_, samples_[0]);
}

EventClock::~EventClock() { release(); }

void EventClock::release() noexcept {
  if (anchor_) PIPELAB_CUDA_WARN(cudaEventDestroy(anchor_));
  for (cudaEvent_t event : samples_)
    if (event) PIPELAB_CUDA_WARN(cudaEventDestroy(event));
  anchor_ = nullptr;
  samples_.fill(nullptr);
}

HostTime EventClock::sample(cudaStream_t stream) {
  PIPELAB_CUDA_CHECK(cudaStreamSynchronize(stream));  // so each sample completes at once
  std::array<ClockSample, kClockSamples> readings;
  for (size_t i = 0; i < samples_.size(); ++i) {
    PIPELAB_CUDA_CHECK(cudaEventRecord(samples_[i], stream));
    PIPELAB_CUDA_CHECK(cudaEventSynchronize(samples_[i]));
    readings[i].host = std::chrono::steady_clock::now();
  }
  for (size_t i = 0; i < samples_.size(); ++i) {
    float ms = 0.0f;
    PIPELAB_CUDA_CHECK(cudaEventElapsedTime(&ms, samples_[0], samples_[i]));
    readings[i].since_anchor = from_ms(ms);
  }
  return best_anchor_time(readings);
}

void EventClock::recalibrate(cudaStream_t stream) {
  const HostTime measured = sample(stream);
  float ms = 0.0f;
  PIPELAB_CUDA_CHECK(cudaEventElapsedTime(&ms, anchor_, samples_[0]));
  const HostTime predicted = anchor_host_ + from_ms(ms);
  anchor_host_ = slewed_anchor_time(predicted, measured, max_slew(predicted - anchor_host_));
  std::swap(anchor_, samples_[0]);
}

HostTime EventClock::host_time(cudaEvent_t event) const {
  PIPELAB_CUDA_CHECK(cudaEventSynchronize(event));
  float ms = 0.0f;
  PIPELAB_CUDA_CHECK(cudaEventElapsedTime(&ms, anchor_, event));
  return anchor_host_ + from_ms(ms);
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

}  // namespace pipelab::gpu
