// 1F1B (PipeDream-Flush / DAPPLE): stage s runs min(p - s - 1, m) warm-up
// forwards, then alternates one forward and one backward, then drains the
// remaining backwards. At most min(p - s, m) micro-batches are in flight on
// stage s (GPipe holds m), for the same bubble as GPipe.
#include <algorithm>

#include "core/schedule/generator_support.h"
#include "core/schedule/generators.h"

namespace pipelab {

Schedule generate_1f1b(int pp, int microbatches) {
  check_generator_options({ScheduleKind::OneFOneB, pp, microbatches, 1, 1});
  Schedule schedule = make_compute_schedule(ScheduleKind::OneFOneB, pp, microbatches, 1, 1);
  for (int stage = 0; stage < pp; ++stage) {
    const int warmup = std::min(pp - stage - 1, microbatches);
    for (const PassSlot& slot : one_f_one_b_order(warmup, microbatches)) {
      const OpKind kind = slot.forward ? OpKind::Forward : OpKind::Backward;
      schedule.devices[stage].push_back(make_compute_op(kind, stage, stage, 0, slot.index, 0, 0));
    }
  }
  return schedule;
}

}  // namespace pipelab
