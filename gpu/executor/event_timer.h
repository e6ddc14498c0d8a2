// Timing GPU ops on the host's clock, so measured traces line up with the
// executor's host-side events.
//
// EventClock calibrates once per stream: it records a reference event, waits
// for it, and takes steady_clock::now() right after. Any later event then maps
// to t_host = t_reference_host + cudaEventElapsedTime(reference, event). (The
// host timestamp trails the GPU's by the wake-up latency, a few microseconds,
// the same for every event.) Recalibrate now and then on long runs.
//
// EventTimer brackets one op on a stream with a begin and an end event and an
// NVTX range of the same name (use op_label(op)), so Nsight Systems shows the
// schedule's names. Reading the times waits for the end event.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <string>

#include "core/schedule/op.h"

namespace pipelab::gpu {

using HostTime = std::chrono::steady_clock::time_point;

class EventClock {
 public:
  // Calibrates on `stream` of the current device (waits for the stream's work).
  explicit EventClock(cudaStream_t stream);
  ~EventClock();
  EventClock(const EventClock&) = delete;
  EventClock& operator=(const EventClock&) = delete;

  // Records a new reference on `stream` and waits for it.
  void calibrate(cudaStream_t stream);
  // The host time at which `event` (recorded after the reference) completed;
  // waits for the event.
  HostTime host_time(cudaEvent_t event) const;

 private:
  cudaEvent_t reference_ = nullptr;
  HostTime reference_host_{};
};

// A begin and an end on the host clock.
struct HostInterval {
  HostTime begin{};
  HostTime end{};
  double seconds() const { return std::chrono::duration<double>(end - begin).count(); }
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

// An NVTX range for a scope: marks host-side work (launch code, waits) with a
// name in Nsight Systems' timeline.
class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name);
  ~NvtxRange();
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace pipelab::gpu
