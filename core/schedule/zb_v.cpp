// ZB-V (Qi et al., "Zero Bubble Pipeline Parallelism", 2023, section 6): every
// device holds two chunks placed in a V (rank r runs stage r going down and
// stage 2p - 1 - r coming back up, see device_layout.h), and every backward is
// split into BI and BW as in zb-h1. The order is the one PyTorch's
// torch.distributed.pipelining ScheduleZBVZeroBubble builds, so that a run here
// can be compared op for op with a run there. For rank r:
//   warm-up:   2(p - r) - 1 chunk-0 forwards; then r pairs (chunk-1 F, chunk-0 F);
//              then p - r triples (chunk-1 F, BI, BW): rank 0's chunk 1 is the last
//              stage, so its backward can start at once;
//   steady:    while forwards remain: chunk-0 F (if any left), chunk-0 BI, BW,
//              chunk-1 F, BI, BW;
//   cool-down: r pairs (chunk-0 BI, chunk-1 BI) with their BWs deferred; then
//              p - r pairs (chunk-0 BI, the oldest deferred chunk-0 BW); then the
//              remaining chunk-1 BWs, then the remaining chunk-0 BWs.
// The phases assume at least 2p - 1 micro-batches; with fewer, the order is
// built for 2p - 1 and the ops of micro-batches that do not exist are dropped
// (as torch does), which keeps every dependency since a real micro-batch never
// waits for a missing one.
//
// With F = BI = BW per chunk the steady state has no bubble; memory peaks near
// 1F1B's (about p micro-batches of a whole device's activations).
#include <algorithm>

#include "core/schedule/generator_support.h"
#include "core/schedule/generators.h"

namespace pipelab {

Schedule generate_zb_v(int pp, int microbatches) {
  check_generator_options({ScheduleKind::ZeroBubbleV, pp, microbatches, 2, 1});
  Schedule schedule = make_compute_schedule(ScheduleKind::ZeroBubbleV, pp, microbatches, 2, 1);
  const DeviceLayout layout = schedule.layout();
  const int padded = std::max(2 * pp - 1, microbatches);  // what the phases assume

  for (int rank = 0; rank < pp; ++rank) {
    auto& ops = schedule.devices[rank];
    auto add = [&](OpKind kind, int chunk, int mb) {
      if (mb >= microbatches) return;  // padding micro-batch: dropped
      ops.push_back(make_compute_op(kind, rank, layout.stage_of(rank, chunk), chunk, mb, 0, 0));
    };
    // Next micro-batch of each chunk for F, BI and BW.
    int forward[2] = {0, 0};
    int input_grad[2] = {0, 0};
    int weight_grad[2] = {0, 0};
    auto run_forward = [&](int chunk) { add(OpKind::Forward, chunk, forward[chunk]++); };
    auto run_input_grad = [&](int chunk) { add(OpKind::BackwardInput, chunk, input_grad[chunk]++); };
    auto run_weight_grad = [&](int chunk) { add(OpKind::BackwardWeight, chunk, weight_grad[chunk]++); };
    auto run_backward = [&](int chunk) {  // BI and its BW at once
      run_input_grad(chunk);
      run_weight_grad(chunk);
    };

    // Warm-up.
    for (int i = 0; i < 2 * (pp - rank) - 1; ++i) run_forward(0);
    for (int i = 0; i < rank; ++i) {
      run_forward(1);
      run_forward(0);
    }
    for (int i = 0; i < pp - rank; ++i) {
      run_forward(1);
      run_backward(1);
    }
    // Steady state: until chunk 1 has caught up with every chunk-0 forward.
    while (forward[1] < forward[0] || forward[0] < padded) {
      if (forward[0] < padded) run_forward(0);
      run_backward(0);
      run_forward(1);
      run_backward(1);
    }
    // Cool-down: BWs wait here, filling the bubbles of the drain.
    for (int i = 0; i < rank; ++i) {
      run_input_grad(0);
      run_input_grad(1);
    }
    for (int i = 0; i < pp - rank; ++i) {
      run_input_grad(0);
      run_weight_grad(0);
    }
    while (weight_grad[1] < input_grad[1]) run_weight_grad(1);
    while (weight_grad[0] < input_grad[0]) run_weight_grad(0);
  }
  return schedule;
}

}  // namespace pipelab
