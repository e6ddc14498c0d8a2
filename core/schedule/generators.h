// Schedule generators: for each pipeline device, the ordered compute ops
// (F, B, BI, BW) of a step, or of a window of steps for asynchronous schedules.
// The result has dp = tp = 1 and lowered = false; lower_schedule() adds the rest.
#pragma once

#include "core/plan/parallel_plan.h"
#include "core/schedule/schedule.h"

namespace pipelab {

struct GeneratorOptions {
  ScheduleKind kind = ScheduleKind::OneFOneB;
  int pp = 1;            // pipeline devices
  int microbatches = 1;
  int chunks = 1;        // interleaved-1f1b only; must be 1 otherwise
  int steps = 0;         // window length; 0 picks the default (1 for synchronous
                         // schedules, enough steps to reach steady state for async)
};

// Throws std::invalid_argument naming the bad option and the fix (pp < 1,
// microbatches < 1, chunks > 1 for a non-interleaved schedule, interleaved with
// microbatches not a multiple of pp, ...).
Schedule generate_schedule(const GeneratorOptions& options);

// The individual generators (all called through generate_schedule).
Schedule generate_gpipe(int pp, int microbatches);
Schedule generate_1f1b(int pp, int microbatches);
Schedule generate_interleaved_1f1b(int pp, int microbatches, int chunks);
Schedule generate_zb_h1(int pp, int microbatches);
Schedule generate_pipedream(int pp, int microbatches, int steps);
Schedule generate_pipedream_2bw(int pp, int microbatches, int steps);

}  // namespace pipelab
