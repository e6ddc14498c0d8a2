// Timing GPU ops on the host's clock, so measured traces line up with the
// executor's host-side events.
//
// EventClock anchors the GPU's event times to the host clock: it records a
// few events on an idle stream, reads steady_clock after each, and keeps the
// sample with the least host wake-up delay (clock_calibration.h). Any later
// event then maps to t_host = t_anchor + cudaEventElapsedTime(anchor, event).
// Long runs re-anchor now and then (recalibrate()), slewing the mapping by a
// bounded step instead of jumping, so ops around a re-anchor keep their places.
//
// EventTimer brackets one op on a stream with a begin and an end event and an
// NVTX range of the same name (use op_label(op)), so Nsight Systems shows the
// schedule's names. Reading the times waits for the end event.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <chrono>
#include <string>

#include "core/schedule/op.h"
#include "gpu/executor/clock_calibration.h"

namespace pipelab::gpu {

class EventClock {
 public:
  // Anchors on `stream` of the current device (waits for the stream's work).
  explicit EventClock(cudaStream_t stream);
  ~EventClock();
  EventClock(const EventClock&) = delete;
  EventClock& operator=(const EventClock&) = delete;

  // Records a new anchor on `stream` (waits for it) and moves the mapping
  // towards the new measurement by at most max_slew(). Map no event
  // recorded before it afterwards.
  void recalibrate(cudaStream_t stream);
  // The host time at which `event` (recorded after the anchor) completed;
  // waits for the event.
  HostTime host_time(cudaEvent_t event) const;

 private:
  // Records the samples on the idle `stream`; returns the best estimate of
  // when samples_[0] completed.
  HostTime sample(cudaStream_t stream);
  void release() noexcept;

  std::array<cudaEvent_t, kClockSamples> samples_{};  // samples_[0] becomes the anchor
  cudaEvent_t anchor_ = nullptr;
  HostTime anchor_host_{};
};

class EventTimer {
 public:
  EventTimer();  // creates the two events on the current device
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Opens the NVTX range `name` and records the begin event on `stream`.
  void begin(cudaStream_t stream, const std::string& name);
  // The same, named op_label(op): "F3 s1", "BW2 s0", ...
  void begin(cudaStream_t stream, const Op& op) { begin(stream, op_label(op)); }
  // Records the end event on `stream` and closes the NVTX range.
  void end(cudaStream_t stream);

  // Whether the end event has completed (no waiting).
  bool ready() const;
  // GPU time between the two events, in milliseconds (waits for the end).
  float elapsed_ms() const;
  // Both events on the host clock (waits for the end).
  HostInterval resolve(const EventClock& clock) const;

 private:
  cudaEvent_t begin_ = nullptr;
  cudaEvent_t end_ = nullptr;
};

}  // namespace pipelab::gpu
