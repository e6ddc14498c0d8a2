// OpTimings: how a virtual device of the CUDA executor reports its ops. Each
// op is bracketed by a CUDA event pair on the stream that runs it (begin()
// and end()), and an NVTX range of the same name, op_label(op), on the host
// thread that issues it, so an Nsight Systems capture shows the app's names.
//
// The host runs ahead of the GPU, so an op's times are known only once the
// GPU has passed its end event. Finished ops wait in a queue; emit_ready()
// hands those already done to the RunRecorder (without waiting) and
// emit_all() waits for every one. Event times are mapped onto the host clock
// with an EventClock (event_timer.h) and then onto the run's clock, so GPU
// ops, host-side memory samples and step metrics share one time base. The
// times reported for one stream never go back: an op begins no earlier than
// the previous op on its stream ended (StreamMonotonicity), whatever a
// re-anchoring of the clock did between them.
// At most kMaxQueuedOps ops wait: beyond that end() waits for the oldest,
// which bounds how far the host runs ahead.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "core/runtime/run_clock.h"
#include "core/runtime/run_reporter.h"
#include "gpu/executor/event_timer.h"

namespace pipelab::gpu {

class OpTimings {
 public:
  static constexpr size_t kMaxQueuedOps = 512;

  // For virtual device `device` on GPU `gpu` (made current for the calls).
  // Calibrates on `stream`, which it waits for.
  OpTimings(int device, int gpu, cudaStream_t stream, const RunClock& clock, RunReporter& recorder);
  ~OpTimings();
  OpTimings(const OpTimings&) = delete;
  OpTimings& operator=(const OpTimings&) = delete;

  // Opens the NVTX range op_label(op) and records the begin event on `stream`.
  // Ops may nest (a tensor-parallel all-reduce inside a forward); each end()
  // closes the innermost open op.
  void begin(cudaStream_t stream, const Op& op);
  // Records the end event on `stream` and closes the range; `op` is the
  // identity to report (global step, the weight version actually used).
  void end(cudaStream_t stream, const Op& op, int64_t bytes);

  // Reports every queued op whose end the GPU has passed, in order.
  void emit_ready();
  // Waits for and reports every queued op; recalibrates the clock now and
  // then when nothing is queued (GPU and host clocks drift apart slowly).
  void emit_all();
  // After a stop or an error, on the issuing thread: closes its open NVTX
  // ranges and forgets queued ops.
  void abandon();
  size_t queued() const { return queued_.size(); }

 private:
  struct OpenOp {
    std::unique_ptr<EventTimer> timer;
    uint64_t begin_sequence = 0;
  };
  struct QueuedOp {
    TraceEvent event;  // identity and bytes; times filled in when resolved
    std::unique_ptr<EventTimer> timer;
    cudaStream_t stream = nullptr;
    uint64_t begin_sequence = 0;
    uint64_t end_sequence = 0;
  };
  std::unique_ptr<EventTimer> take_timer();
  void emit_front();

  const int device_;
  const int gpu_;
  const cudaStream_t calibration_stream_;
  const RunClock& clock_;
  RunReporter& recorder_;
  std::unique_ptr<EventClock> event_clock_;
  std::chrono::steady_clock::time_point calibrated_at_;
  std::vector<OpenOp> open_;                        // begun, not ended (innermost last)
  std::deque<QueuedOp> queued_;                     // ended, not yet reported
  std::vector<std::unique_ptr<EventTimer>> spare_;  // for reuse
  uint64_t next_sequence_ = 1;                      // of the events recorded, in issue order
  StreamMonotonicity monotonicity_;
};

}  // namespace pipelab::gpu
