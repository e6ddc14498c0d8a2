// PipeDream-2BW (double-buffered weights): PipeDream's 1F1B order without a
// flush, but each stage accumulates gradients over the m micro-batches of a step
// and updates once, after the step's last backward. A forward reads the number
// of steps whose backwards are all done on its stage; a backward reads its
// forward's version. With m >= p a stage's in-flight micro-batches span at most
// two versions, so two weight buffers suffice (the checker enforces m >= p).
#include <algorithm>

#include "core/schedule/generator_support.h"
#include "core/schedule/generators.h"

namespace pipelab {

Schedule generate_pipedream_2bw(int pp, int microbatches, int steps) {
  check_generator_options({ScheduleKind::PipeDream2BW, pp, microbatches, 1, steps});
  if (steps == 0) steps = default_steps(ScheduleKind::PipeDream2BW, pp, microbatches);
  Schedule schedule = make_compute_schedule(ScheduleKind::PipeDream2BW, pp, microbatches, 1, steps);
  const int total = steps * microbatches;
  for (int stage = 0; stage < pp; ++stage) {
    const int warmup = std::min(pp - stage - 1, total);
    std::vector<int> forward_version(total, 0);
    int updates_done = 0;  // the U after each step's last backward
    for (const PassSlot& slot : one_f_one_b_order(warmup, total)) {
      const int step = slot.index / microbatches;
      const int mb = slot.index % microbatches;
      if (slot.forward) forward_version[slot.index] = updates_done;
      const OpKind kind = slot.forward ? OpKind::Forward : OpKind::Backward;
      schedule.devices[stage].push_back(
          make_compute_op(kind, stage, stage, 0, mb, step, forward_version[slot.index]));
      // Backwards run in micro-batch order, so micro-batch m - 1 ends the step.
      if (!slot.forward && mb == microbatches - 1) ++updates_done;
    }
  }
  return schedule;
}

}  // namespace pipelab
