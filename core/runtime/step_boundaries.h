// Step boundaries: where each device of a window schedule stands once a
// training step is over, so a run can halt there (step(), evaluation) without
// any device waiting on a message that will never come.
//
// For step s the boundary of device d is a prefix length of d's op list: the
// shortest prefixes that contain every op of steps <= s and are closed under
// "waits for": a receive's send, the other members' ops of an all-reduce, and
// the pushes a pull waits for are inside too. For synchronous schedules (one
// step per window) the boundary of the window's step is simply the whole list;
// for PipeDream it lies mid-window, with stage 0 a few forwards ahead.
#pragma once

#include <vector>

#include "core/schedule/schedule.h"

namespace pipelab {

class StepBoundaries {
 public:
  explicit StepBoundaries(const Schedule& window);

  int steps() const { return steps_; }
  // Per device: how many of its ops run before the halt after step `step`.
  std::vector<int> after_step(int step) const;
  // Per device: index of its last op of `step` (-1 when it has none).
  const std::vector<std::vector<int>>& last_op_of_step() const { return last_op_; }

 private:
  const Schedule& window_;
  int steps_ = 0;
  std::vector<int> first_op_;                // global numbering, as in op_matching.h
  std::vector<std::vector<int>> waits_for_;  // per global op: global ops it needs first
  std::vector<std::vector<int>> last_op_;    // [device][step]
};

}  // namespace pipelab
