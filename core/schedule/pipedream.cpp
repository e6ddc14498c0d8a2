// PipeDream (asynchronous 1F1B with weight stashing): the window's steps * m
// micro-batches flow through one 1F1B sequence without a flush, so warm-up
// happens only at the window's start and cool-down only at its end. Global
// micro-batch g is micro-batch g % m of step g / m.
//
// Every stage applies an update after every backward (lowering adds the U), so
// a forward reads version "backwards done on this stage so far", and each
// backward reads the version its forward read (the stashed weights). In the
// steady state stage s has p - s micro-batches in flight, each on a different
// version, so it keeps p - s weight versions alive.
#include <algorithm>

#include "core/schedule/generator_support.h"
#include "core/schedule/generators.h"

namespace pipelab {

Schedule generate_pipedream(int pp, int microbatches, int steps) {
  check_generator_options({ScheduleKind::PipeDream, pp, microbatches, 1, steps});
  if (steps == 0) steps = default_steps(ScheduleKind::PipeDream, pp, microbatches);
  Schedule schedule = make_compute_schedule(ScheduleKind::PipeDream, pp, microbatches, 1, steps);
  const int total = steps * microbatches;
  for (int stage = 0; stage < pp; ++stage) {
    const int warmup = std::min(pp - stage - 1, total);
    std::vector<int> forward_version(total, 0);
    int backwards_done = 0;
    for (const PassSlot& slot : one_f_one_b_order(warmup, total)) {
      const int step = slot.index / microbatches;
      const int mb = slot.index % microbatches;
      if (slot.forward) forward_version[slot.index] = backwards_done;
      const OpKind kind = slot.forward ? OpKind::Forward : OpKind::Backward;
      schedule.devices[stage].push_back(
          make_compute_op(kind, stage, stage, 0, mb, step, forward_version[slot.index]));
      if (!slot.forward) ++backwards_done;
    }
  }
  return schedule;
}

}  // namespace pipelab
