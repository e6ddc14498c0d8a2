// GPipe (fill-drain): every stage runs all forwards of the step, then all
// backwards. Backwards go in micro-batch order (as PyTorch's ScheduleGPipe);
// the stage's peak in-flight count is therefore m. With one micro-batch this is
// naive model parallelism: one device busy at a time.
#include "core/schedule/generator_support.h"
#include "core/schedule/generators.h"

namespace pipelab {

Schedule generate_gpipe(int pp, int microbatches) {
  check_generator_options({ScheduleKind::GPipe, pp, microbatches, 1, 1});
  Schedule schedule = make_compute_schedule(ScheduleKind::GPipe, pp, microbatches, 1, 1);
  for (int stage = 0; stage < pp; ++stage) {
    auto& ops = schedule.devices[stage];
    for (int mb = 0; mb < microbatches; ++mb)
      ops.push_back(make_compute_op(OpKind::Forward, stage, stage, 0, mb, 0, 0));
    for (int mb = 0; mb < microbatches; ++mb)
      ops.push_back(make_compute_op(OpKind::Backward, stage, stage, 0, mb, 0, 0));
  }
  return schedule;
}

}  // namespace pipelab
