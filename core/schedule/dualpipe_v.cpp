// DualPipeV: the V-shaped half of DeepSeek's DualPipe (DeepSeek-V3 technical
// report, section 3.2), in the order PyTorch's torch.distributed.pipelining
// ScheduleDualPipeV builds, so that a run here compares op for op with a run
// there. Every device holds two chunks placed in a V as in zb-v (rank r runs
// stage r going down and stage 2p - 1 - r coming back up, device_layout.h).
// For rank r, with chunk c's ops written Fc, Bc (fused backward), Ic (BI) and W
// (the oldest BW still owed, of either chunk):
//   1. 2(p - r - 1) F0                   fill the way down
//   2. r + 1 pairs F0 F1                 the first micro-batches turn at the V's tip
//   3. p - r - 1 triples I1 W F1         zero-bubble start of chunk 1's backward
//   4. m - 2p + r + 1 times (F0 B1)(F1 B0): the steady phase, forward-backward pairs
//      (the last rank's very first pair is not overlapped in torch; the same two ops)
//   5. p - r - 1 times B1 (F1 B0)        chunk 0's forwards run out
//   6. r + 1 pairs B1 B0, from the middle pair on as I1 I0 (their BWs wait)
//   7. p - r - 1 pairs W I0              the waiting BWs fill the drain
//   8. r + 1 W                           the rest of them
// torch refuses m < 2p (stage 1's warm-up alone needs 2p - 1 forwards of chunk
// 0 on rank 0), and so does PipeLab, naming m = 2p.
//
// An overlapped pair (torch's OVERLAP_F_B action) is its two ops listed back to
// back, forward first: one device computes one op at a time, and torch's runtime
// also runs a pair's F and then its B unless a custom overlap function is
// registered. What DualPipe gains from a pair is hiding one op's communication
// (the MoE all-to-alls, the pipeline's sends) behind the other's compute, and
// PipeLab already runs every send and receive on the communication lane, beside
// compute. So no flag is needed: the simulator, the executor and the timeline
// read a pair as two consecutive compute ops.
#include <deque>
#include <string>

#include "core/schedule/generator_support.h"
#include "core/schedule/generators.h"

namespace pipelab {

std::string dualpipe_v_microbatches_problem(int pp, int microbatches) {
  if (microbatches >= 2 * pp) return "";
  return "dualpipev needs microbatches (" + std::to_string(microbatches) +
         ") >= its stage count 2 * pp = " + std::to_string(2 * pp) +
         " (as PyTorch's ScheduleDualPipeV); try microbatches = " + std::to_string(2 * pp);
}

Schedule generate_dualpipe_v(int pp, int microbatches) {
  check_generator_options({ScheduleKind::DualPipeV, pp, microbatches, 2, 1});
  Schedule schedule = make_compute_schedule(ScheduleKind::DualPipeV, pp, microbatches, 2, 1);
  const DeviceLayout layout = schedule.layout();

  for (int rank = 0; rank < pp; ++rank) {
    auto& ops = schedule.devices[rank];
    auto add = [&](OpKind kind, int chunk, int mb) {
      ops.push_back(make_compute_op(kind, rank, layout.stage_of(rank, chunk), chunk, mb, 0, 0));
    };
    // Next micro-batch of each chunk for F and for its backward (B or BI).
    int forward[2] = {0, 0};
    int backward[2] = {0, 0};
    struct Owed {
      int chunk;
      int microbatch;
    };
    std::deque<Owed> weight_grads_owed;  // BIs whose BW has not run, oldest first

    auto run_forward = [&](int chunk) { add(OpKind::Forward, chunk, forward[chunk]++); };
    auto run_backward = [&](int chunk) { add(OpKind::Backward, chunk, backward[chunk]++); };
    auto run_input_grad = [&](int chunk) {
      weight_grads_owed.push_back({chunk, backward[chunk]});
      add(OpKind::BackwardInput, chunk, backward[chunk]++);
    };
    auto run_owed_weight_grad = [&] {
      if (weight_grads_owed.empty()) return;
      add(OpKind::BackwardWeight, weight_grads_owed.front().chunk,
          weight_grads_owed.front().microbatch);
      weight_grads_owed.pop_front();
    };
    auto run_pair = [&](int forward_chunk, int backward_chunk) {  // torch's OVERLAP_F_B
      run_forward(forward_chunk);
      run_backward(backward_chunk);
    };

    const int after_rank = pp - rank - 1;  // ranks after this one, towards the tip of the V
    // 1, 2: the fill.
    for (int i = 0; i < 2 * after_rank; ++i) run_forward(0);
    for (int i = 0; i < rank + 1; ++i) {
      run_forward(0);
      run_forward(1);
    }
    // 3: chunk 1's first backwards, split, each BW at once.
    for (int i = 0; i < after_rank; ++i) {
      run_input_grad(1);
      run_owed_weight_grad();
      run_forward(1);
    }
    // 4: the steady phase.
    for (int i = 0; i < microbatches - 2 * pp + rank + 1; ++i) {
      run_pair(0, 1);
      run_pair(1, 0);
    }
    // 5: chunk 0's forwards have run out.
    for (int i = 0; i < after_rank; ++i) {
      run_backward(1);
      run_pair(1, 0);
    }
    // 6: the split starts at the middle pair; on odd ranks with chunk 1's op,
    // on even ranks with chunk 0's (chunk 1's op of that pair stays fused).
    const int pairs = rank + 1;
    bool split = false;
    for (int i = 0; i < pairs; ++i) {
      if (i == pairs / 2 && rank % 2 == 1) split = true;
      split ? run_input_grad(1) : run_backward(1);
      if (i == pairs / 2 && rank % 2 == 0) split = true;
      split ? run_input_grad(0) : run_backward(0);
    }
    // 7, 8: the owed BWs fill the drain.
    for (int i = 0; i < after_rank; ++i) {
      run_owed_weight_grad();
      run_input_grad(0);
    }
    for (int i = 0; i < pairs; ++i) run_owed_weight_grad();
  }
  return schedule;
}

}  // namespace pipelab
