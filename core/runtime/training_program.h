// TrainingProgram: what every device runs over a whole training run, as a
// sequence of windows of the lowered schedule (core/schedule/lowering.h
// build_schedule, the same schedule the simulator reads).
//
//  - Synchronous schedules lower one training step; window w is step w.
//  - Asynchronous ones (pipedream, pipedream-2bw, and async data parallelism)
//    lower a window of several steps that starts from an empty pipeline. Here a
//    window covers the whole run, up to kMaxWindowSteps steps, so PipeDream's
//    pipeline never flushes inside it; longer runs use windows of that length
//    (window w covers steps w*W .. w*W+W-1, and the last one the rest). A
//    window shorter than the schedule's minimum (async data parallelism needs
//    staleness + 2 steps) is generated at the minimum and cut to its steps:
//    dropping every op of the later steps leaves a valid schedule, since ops
//    only wait for ops of their own or earlier steps.
// Ops keep their window-relative step; global step = window.first_step + op.step.
// A device's position counts its ops from the start of the run. Windows are
// computed when asked for, not stored: a run of millions of steps costs no
// memory per step.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/plan/parallel_plan.h"
#include "core/plan/stage_profile.h"
#include "core/runtime/step_boundaries.h"
#include "core/schedule/schedule.h"

namespace pipelab {

struct TrainingWindow {
  const Schedule* schedule = nullptr;
  const StepBoundaries* boundaries = nullptr;
  int first_step = 0;  // global step of the window's step 0
  int steps = 0;
  std::vector<int64_t> first_position;  // per device
};

class TrainingProgram {
 public:
  static constexpr int kMaxWindowSteps = 256;

  // Throws std::invalid_argument (from the schedule builders) for a plan that
  // cannot be lowered.
  TrainingProgram(const ParallelPlan& plan, const std::vector<StageProfile>& profiles,
                  int total_steps);

  int total_steps() const { return total_steps_; }
  int device_count() const { return devices_; }
  bool asynchronous() const { return asynchronous_; }
  // The full windows, and a shorter last one when the steps do not divide
  // evenly (it has the second schedule).
  int window_count() const { return full_windows_ + (schedules_.size() > 1 ? 1 : 0); }
  // Window `index`, 0 .. window_count() - 1.
  TrainingWindow window(int index) const;
  TrainingWindow window_of_step(int step) const;
  // The first window's schedule: every window has the same devices, stages
  // and messages between them.
  const Schedule& schedule() const { return *schedules_.front(); }
  // Per device: the position where it halts once global step `step` is over.
  std::vector<int64_t> positions_after_step(int step) const;
  // Per device: the position after its last op.
  std::vector<int64_t> end_positions() const;

 private:
  const Schedule& add_schedule(Schedule schedule);

  int total_steps_ = 0;
  int devices_ = 0;
  bool asynchronous_ = false;
  std::vector<std::unique_ptr<Schedule>> schedules_;  // at most two distinct windows
  std::vector<std::unique_ptr<StepBoundaries>> boundaries_;
  int window_steps_ = 1;  // steps of every window but a shorter last one
  int full_windows_ = 0;  // windows of window_steps_ steps
};

// The lowered schedule of `steps` training steps for `plan`: generated with at
// least the schedule's minimum window, then cut to `steps`.
Schedule build_window(const ParallelPlan& plan, const std::vector<StageProfile>& profiles,
                      int steps);

}  // namespace pipelab
