// Shared pieces of the schedule generators: an empty compute schedule, a
// compute op, and the one-forward-one-backward order several generators reuse.
#pragma once

#include <vector>

#include "core/schedule/schedule.h"

namespace pipelab {

// A compute-only schedule (dp = tp = 1, not lowered) with `pp` empty device lists.
Schedule make_compute_schedule(ScheduleKind kind, int pp, int microbatches, int chunks, int steps);

// An F, B, BI or BW op of a pipeline device (device = its pipeline rank).
Op make_compute_op(OpKind kind, int device, int stage, int chunk, int microbatch, int step,
                   int weight_version);

// One pass in a stage's 1F1B sequence: the forward or backward of the
// `index`-th micro-batch the stage sees.
struct PassSlot {
  bool forward = true;
  int index = 0;
};

// `warmup` forwards, then alternately one forward and one backward, then the
// remaining backwards (cool-down): 2 * count slots, every index 0..count-1 once
// as a forward and once as a backward, each backward after its forward.
std::vector<PassSlot> one_f_one_b_order(int warmup, int count);

}  // namespace pipelab
