// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", 2023): 1F1B with each
// backward split into BI (input gradient, on the critical path between stages)
// and BW (weight gradient, needed by nobody but the optimizer step). Stage s
// keeps 1F1B's warm-up of min(p - s - 1, m) forwards and its F / BI rhythm; in
// the steady state it runs the BW of micro-batch i right after the BI of
// micro-batch i + s (BWs are deferred by the stage's missing warm-up forwards),
// in the cool-down the oldest pending BW follows each BI, and the rest fill the
// tail. With unit costs the
// bubble drops from (p - 1)(F + B + W) to (p - 1)(F + B - W).
//
// Memory, in the paper's sense of "same peak as 1F1B": counting a micro-batch
// in flight from its F until its BW, every stage holds at most min(p, m), which
// is 1F1B's peak (reached on stage 0); counting until BI, stage s holds at most
// min(p - s, m), exactly as in 1F1B. The activations BW still needs after BI
// are a fraction of the full set.
#include <algorithm>
#include <deque>

#include "core/schedule/generator_support.h"
#include "core/schedule/generators.h"

namespace pipelab {

Schedule generate_zb_h1(int pp, int microbatches) {
  check_generator_options({ScheduleKind::ZeroBubbleH1, pp, microbatches, 1, 1});
  Schedule schedule = make_compute_schedule(ScheduleKind::ZeroBubbleH1, pp, microbatches, 1, 1);
  for (int stage = 0; stage < pp; ++stage) {
    auto& ops = schedule.devices[stage];
    auto add = [&](OpKind kind, int mb) {
      ops.push_back(make_compute_op(kind, stage, stage, 0, mb, 0, 0));
    };
    const int warmup = std::min(pp - stage - 1, microbatches);
    const int deferral = stage;  // BWs wait for this many later BIs
    std::deque<int> pending_weight_grads;

    for (int mb = 0; mb < warmup; ++mb) add(OpKind::Forward, mb);
    // Steady state: F, BI, and a BW once more than `deferral` are pending.
    for (int i = 0; i < microbatches - warmup; ++i) {
      add(OpKind::Forward, warmup + i);
      add(OpKind::BackwardInput, i);
      pending_weight_grads.push_back(i);
      if (static_cast<int>(pending_weight_grads.size()) > deferral) {
        add(OpKind::BackwardWeight, pending_weight_grads.front());
        pending_weight_grads.pop_front();
      }
    }
    // Cool-down: each BI is followed by the oldest pending BW.
    for (int i = microbatches - warmup; i < microbatches; ++i) {
      add(OpKind::BackwardInput, i);
      pending_weight_grads.push_back(i);
      add(OpKind::BackwardWeight, pending_weight_grads.front());
      pending_weight_grads.pop_front();
    }
    // Tail: the deferred BWs fill the drain bubble.
    for (int mb : pending_weight_grads) add(OpKind::BackwardWeight, mb);
  }
  return schedule;
}

}  // namespace pipelab
