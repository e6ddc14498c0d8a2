// PipeMare (Yang et al., MLSys 2021): PipeDream's asynchronous 1F1B order, one
// update per backward, but without weight stashing. Each stage keeps one weight
// version: a forward reads it as it is, and the backward of the same
// micro-batch reads it as it is then, after the updates of the backwards in
// between. Each B records that delay (updates between its F and its B); in the
// steady state it is p - s - 1 on stage s, 0 on the last stage.
#include "core/schedule/generators.h"

namespace pipelab {

Schedule generate_pipemare(int pp, int microbatches, int steps) {
  check_generator_options({ScheduleKind::PipeMare, pp, microbatches, 1, steps});
  Schedule schedule = generate_pipedream(pp, microbatches, steps);
  schedule.kind = ScheduleKind::PipeMare;
  for (std::vector<Op>& ops : schedule.devices) {
    int backwards_done = 0;  // = the stage's newest version (one update per B)
    for (Op& op : ops) {
      if (op.kind != OpKind::Backward) continue;
      op.weight_delay = backwards_done - op.weight_version;  // op holds its F's version
      op.weight_version = backwards_done;
      ++backwards_done;
    }
  }
  return schedule;
}

}  // namespace pipelab
