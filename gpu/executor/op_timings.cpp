#include "gpu/executor/op_timings.h"

#include <nvtx3/nvToolsExt.h>

#include <cassert>

#include "gpu/device/device_guard.h"

namespace pipelab::gpu {
namespace {

// Re-anchoring costs a stream synchronisation; once a second keeps the
// float milliseconds of cudaEventElapsedTime precise to well under a
// microsecond and follows the drift between the GPU's and the host's clocks.
constexpr std::chrono::seconds kRecalibrateEvery{1};

}  // namespace

OpTimings::OpTimings(int device, int gpu, cudaStream_t stream, const RunClock& clock,
                     RunReporter& recorder)
    : device_(device), gpu_(gpu), calibration_stream_(stream), clock_(clock), recorder_(recorder) {
  DeviceGuard guard(gpu_);
  event_clock_ = std::make_unique<EventClock>(stream);
  calibrated_at_ = std::chrono::steady_clock::now();
}

OpTimings::~OpTimings() {
  // NVTX ranges belong to the issuing thread, which called abandon() already.
  DeviceGuard guard(gpu_, DeviceGuard::NoThrow{});
  open_.clear();
  queued_.clear();
  spare_.clear();
  event_clock_.reset();
}

std::unique_ptr<EventTimer> OpTimings::take_timer() {
  if (spare_.empty()) {
    DeviceGuard guard(gpu_);
    return std::make_unique<EventTimer>();
  }
  std::unique_ptr<EventTimer> timer = std::move(spare_.back());
  spare_.pop_back();
  return timer;
}

void OpTimings::begin(cudaStream_t stream, const Op& op) {
  std::unique_ptr<EventTimer> timer = take_timer();
  timer->begin(stream, op);
  open_.push_back({std::move(timer), next_sequence_++});
}

void OpTimings::end(cudaStream_t stream, const Op& op, int64_t bytes) {
  assert(!open_.empty());
  OpenOp open = std::move(open_.back());
  open_.pop_back();
  open.timer->end(stream);
  QueuedOp queued;
  queued.event.device = device_;
  queued.event.op = op;
  queued.event.bytes = bytes;
  queued.timer = std::move(open.timer);
  queued.stream = stream;
  queued.begin_sequence = open.begin_sequence;
  queued.end_sequence = next_sequence_++;
  queued_.push_back(std::move(queued));
  if (queued_.size() > kMaxQueuedOps) emit_front();
}

void OpTimings::emit_front() {
  QueuedOp& front = queued_.front();
  const HostInterval interval =
      monotonicity_.clamp(reinterpret_cast<uintptr_t>(front.stream), front.begin_sequence,
                          front.end_sequence, front.timer->resolve(*event_clock_));  // waits
  front.event.t_begin = clock_.seconds_at(interval.begin);
  front.event.t_end = clock_.seconds_at(interval.end);
  recorder_.event(front.event);
  spare_.push_back(std::move(front.timer));
  queued_.pop_front();
}

void OpTimings::emit_ready() {
  while (!queued_.empty() && queued_.front().timer->ready()) emit_front();
}

void OpTimings::emit_all() {
  while (!queued_.empty()) emit_front();
  const auto now = std::chrono::steady_clock::now();
  if (open_.empty() && now - calibrated_at_ >= kRecalibrateEvery) {
    DeviceGuard guard(gpu_);
    event_clock_->recalibrate(calibration_stream_);
    calibrated_at_ = std::chrono::steady_clock::now();
  }
}

void OpTimings::abandon() {
  // Each open op pushed an NVTX range on this (the issuing) thread: pop them.
  for (size_t i = 0; i < open_.size(); ++i) nvtxRangePop();
  for (OpenOp& open : open_) spare_.push_back(std::move(open.timer));
  open_.clear();
  for (QueuedOp& queued : queued_) spare_.push_back(std::move(queued.timer));
  queued_.clear();
}

}  // namespace pipelab::gpu
