// Schedule generators: for each pipeline device, the ordered compute ops
// (F, B, BI, BW) of a step, or of a window of steps for asynchronous schedules.
// The result has dp = tp = 1 and lowered = false; lower_schedule() adds the rest.
#pragma once

#include <string>

#include "core/plan/parallel_plan.h"
#include "core/schedule/schedule.h"

namespace pipelab {

struct GeneratorOptions {
  ScheduleKind kind = ScheduleKind::OneFOneB;
  int pp = 1;            // pipeline devices
  int microbatches = 1;
  int chunks = 1;        // interleaved-1f1b: any; zb-v: must be 2; 1 otherwise
  int steps = 0;         // window length; 0 picks the default (1 for synchronous
                         // schedules, enough steps to reach steady state for async)
};

// Throws std::invalid_argument naming the bad option and the fix (pp < 1,
// microbatches < 1, chunks > 1 for a non-interleaved schedule, interleaved with
// microbatches not a multiple of its round count, ...).
Schedule generate_schedule(const GeneratorOptions& options);

// The checks generate_schedule makes, for editors that want to report a bad
// option before generating. Throws std::invalid_argument like generate_schedule.
void check_generator_options(const GeneratorOptions& options);

// The window generate_schedule picks when options.steps is 0: 1 for synchronous
// schedules; for the asynchronous ones (pipedream, pipedream-2bw, pipemare) max(2, ceil(2 * pp / microbatches) + 1)
// steps, so that the window holds at least 2 * pp + microbatches micro-batches:
// the first stage's warm-up (pp - 1), a stretch where every stage is in its
// steady state (at least pp), and the cool-down.
int default_steps(ScheduleKind kind, int pp, int microbatches);

// The individual generators (all called through generate_schedule; each checks
// its arguments the same way). Ordering details are documented in each .cpp:
//  - gpipe: all F in micro-batch order, then all B in micro-batch order.
//  - 1f1b: stage s does min(pp - s - 1, m) warm-up F, then 1F1B, then cool-down B.
//  - interleaved-1f1b: Megatron's order; stage s runs on rank s % pp as chunk s / pp.
//  - zb-h1: 1F1B with B split into BI and BW; stage s defers each BW by s micro-batches.
//  - zb-v: two chunks per device in a V (rank r holds stages r and 2 pp - 1 - r), split
//    backward; PyTorch's ScheduleZBVZeroBubble order. Needs chunks = 2.
//  - dualpipev: the same V placement, PyTorch's ScheduleDualPipeV order: its steady
//    phase pairs one chunk's F with the other chunk's fused B. Needs chunks = 2 and
//    microbatches >= 2 pp.
//  - pipedream: 1F1B over the whole window (steps * m micro-batches) without flush;
//    F reads the number of backwards done on its stage (one update per B).
//  - pipemare: pipedream's order; B reads the stage's newest version (no stash)
//    and records its delay (updates since its F) in weight_delay.
//  - pipedream-2bw: same order; one update per step (after the step's last B);
//    needs microbatches >= pp so that two weight versions suffice.
Schedule generate_gpipe(int pp, int microbatches);
Schedule generate_1f1b(int pp, int microbatches);
Schedule generate_interleaved_1f1b(int pp, int microbatches, int chunks);
// Interleaved rounds (PyTorch's rule): R = max(1, m / pp) rounds of m / R
// micro-batches. The problem with m, or "" when m is a multiple of R.
int interleaved_rounds(int pp, int microbatches);
std::string interleaved_microbatches_problem(int pp, int microbatches);
Schedule generate_zb_h1(int pp, int microbatches);
Schedule generate_zb_v(int pp, int microbatches);
Schedule generate_dualpipe_v(int pp, int microbatches);
// DualPipeV needs at least as many micro-batches as stages (2 pp), as PyTorch's
// ScheduleDualPipeV does. The problem with m, or "" when m works.
std::string dualpipe_v_microbatches_problem(int pp, int microbatches);
Schedule generate_pipedream(int pp, int microbatches, int steps);
Schedule generate_pipedream_2bw(int pp, int microbatches, int steps);
Schedule generate_pipemare(int pp, int microbatches, int steps);

}  // namespace pipelab
