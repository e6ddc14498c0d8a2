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
  full_windows_ = total_steps / window_steps_;
  const int rest = total_steps % window_steps_;
  add_schedule(build_window(plan, profiles, window_steps_));
  if (rest > 0) add_schedule(build_window(plan, profiles, rest));
}

TrainingWindow TrainingProgram::window(int index) const {
  assert(index >= 0 && index < window_count());
  // Every window before this one is a full one.
  const size_t which = index < full_windows_ ? 0 : 1;
  TrainingWindow window;
  window.schedule = schedules_[which].get();
  window.boundaries = boundaries_[which].get();
  window.first_step = index * window_steps_;
  window.steps = window.schedule->steps;
  window.first_position.resize(static_cast<size_t>(devices_));
  for (int d = 0; d < devices_; ++d)
    window.first_position[d] =
        int64_t{index} * static_cast<int64_t>(schedules_.front()->devices[d].size());
  return window;
}

TrainingWindow TrainingProgram::window_of_step(int step) const {
  assert(step >= 0 && step < total_steps_);
  return window(step / window_steps_);
}

std::vector<int64_t> TrainingProgram::positions_after_step(int step) const {
  const TrainingWindow window = window_of_step(step);
  const std::vector<int> prefix = window.boundaries->after_step(step - window.first_step);
  std::vector<int64_t> positions(devices_);
  for (int d = 0; d < devices_; ++d) positions[d] = window.first_position[d] + prefix[d];
  return positions;
}

std::vector<int64_t> TrainingProgram::end_positions() const {
  const TrainingWindow last = window(window_count() - 1);
  std::vector<int64_t> positions(devices_);
  for (int d = 0; d < devices_; ++d)
    positions[d] = last.first_position[d] + static_cast<int64_t>(last.schedule->devices[d].size());
  return positions;
}

}  // namespace pipelab
