#include "core/runtime/training_program.h"

#include <algorithm>
#include <cassert>

#include "core/schedule/lowering.h"

namespace pipelab {

Schedule build_window(const ParallelPlan& plan, const std::vector<StageProfile>& profiles,
                      int steps) {
  assert(steps >= 1);
  const int minimum = build_schedule(plan, {}, 0).steps;  // the default window
  Schedule window = build_schedule(plan, profiles, std::max(steps, minimum));
  if (window.steps == steps) return window;
  for (std::vector<Op>& ops : window.devices)
    ops.erase(
        std::remove_if(ops.begin(), ops.end(), [&](const Op& op) { return op.step >= steps; }),
        ops.end());
  window.steps = steps;
  return window;
}

const Schedule& TrainingProgram::add_schedule(Schedule schedule) {
  schedules_.push_back(std::make_unique<Schedule>(std::move(schedule)));
  boundaries_.push_back(std::make_unique<StepBoundaries>(*schedules_.back()));
  return *schedules_.back();
}

TrainingProgram::TrainingProgram(const ParallelPlan& plan,
                                 const std::vector<StageProfile>& profiles, int total_steps)
    : total_steps_(total_steps), devices_(plan.devices()) {
  assert(total_steps >= 1);
  asynchronous_ =
      is_asynchronous(plan.schedule) || (plan.update == UpdateMode::Async && plan.dp > 1);
  window_steps_ = asynchronous_ ? std::min(total_steps, kMaxWindowSteps) : 1;
  const int full_windows = total_steps / window_steps_;
  const int rest = total_steps % window_steps_;

  add_schedule(build_window(plan, profiles, window_steps_));
  if (rest > 0) add_schedule(build_window(plan, profiles, rest));

  std::vector<int64_t> position(devices_, 0);
  for (int w = 0; w < full_windows + (rest > 0 ? 1 : 0); ++w) {
    const size_t which = w < full_windows ? 0 : 1;
    TrainingWindow window;
    window.schedule = schedules_[which].get();
    window.boundaries = boundaries_[which].get();
    window.first_step = w * window_steps_;
    window.steps = window.schedule->steps;
    window.first_position = position;
    for (int d = 0; d < devices_; ++d)
      position[d] += static_cast<int64_t>(window.schedule->devices[d].size());
    windows_.push_back(std::move(window));
  }
}

const TrainingWindow& TrainingProgram::window_of_step(int step) const {
  assert(step >= 0 && step < total_steps_);
  return windows_[static_cast<size_t>(step / window_steps_)];
}

std::vector<int64_t> TrainingProgram::positions_after_step(int step) const {
  const TrainingWindow& window = window_of_step(step);
  const std::vector<int> prefix = window.boundaries->after_step(step - window.first_step);
  std::vector<int64_t> positions(devices_);
  for (int d = 0; d < devices_; ++d) positions[d] = window.first_position[d] + prefix[d];
  return positions;
}

std::vector<int64_t> TrainingProgram::end_positions() const {
  const TrainingWindow& last = windows_.back();
  std::vector<int64_t> positions(devices_);
  for (int d = 0; d < devices_; ++d)
    positions[d] = last.first_position[d] + static_cast<int64_t>(last.schedule->devices[d].size());
  return positions;
}

}  // namespace pipelab
