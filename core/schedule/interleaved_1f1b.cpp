// Interleaved 1F1B (Megatron-LM's virtual pipeline): with v chunks, pipeline
// rank d holds stages d, d + p, ..., d + (v - 1) p; stage s runs on rank s % p
// as chunk s / p. Each rank walks a list of m * v "virtual micro-batches":
// micro-batches are taken in rounds of k, and each round goes through chunk 0,
// then chunk 1, ... (backwards through the chunks in reverse). Rank d runs
//   (p - d - 1) * 2 + (v - 1) * k
// warm-up forwards (capped at m * v), then one forward one backward, then the
// cool-down backwards. Megatron makes every forward a warm-up one when m == p
// because its batched point-to-point calls pair sends with receives; our sends
// never block, so the formula is used for every m. The bubble shrinks by about v
// against 1F1B, at the cost of v times more point-to-point messages.
//
// Rounds follow PyTorch's ScheduleInterleaved1F1B, which relaxes Megatron's
// "m a multiple of p": there are R = max(1, m / p) rounds of k = m / R
// micro-batches, and m must be a multiple of R. With m a multiple of p, k = p
// and the order is Megatron's.
#include <algorithm>
#include <string>

#include "core/schedule/generator_support.h"
#include "core/schedule/generators.h"

namespace pipelab {
namespace {

struct VirtualMicrobatch {
  int chunk = 0;
  int microbatch = 0;
};

// The mapping of the index-th forward (or backward) on a rank to a chunk and a
// micro-batch: rounds of `round_size` micro-batches, each through all chunks.
VirtualMicrobatch virtual_microbatch(int index, int round_size, int chunks, bool forward) {
  const int group_size = round_size * chunks;
  const int in_group = index % group_size;
  VirtualMicrobatch result;
  result.chunk = in_group / round_size;
  if (!forward) result.chunk = chunks - 1 - result.chunk;
  result.microbatch = (index / group_size) * round_size + in_group % round_size;
  return result;
}

}  // namespace

int interleaved_rounds(int pp, int microbatches) { return std::max(1, microbatches / pp); }

std::string interleaved_microbatches_problem(int pp, int microbatches) {
  const int rounds = interleaved_rounds(pp, microbatches);
  if (microbatches % rounds == 0) return "";
  auto works = [&](int m) { return m % interleaved_rounds(pp, m) == 0; };
  int below = microbatches - 1;
  while (!works(below)) --below;  // m < 2 pp always works, so this stops
  int above = microbatches + 1;
  while (!works(above)) ++above;  // so does any multiple of pp
  return "interleaved-1f1b needs microbatches (" + std::to_string(microbatches) +
         ") to be a multiple of its round count max(1, microbatches / pp) = " +
         std::to_string(rounds) + " (as PyTorch's ScheduleInterleaved1F1B); every m < 2 * pp (" +
         std::to_string(2 * pp) + ") and every multiple of pp works; try microbatches = " +
         std::to_string(below) + " or " + std::to_string(above);
}

Schedule generate_interleaved_1f1b(int pp, int microbatches, int chunks) {
  check_generator_options({ScheduleKind::Interleaved1F1B, pp, microbatches, chunks, 1});
  Schedule schedule =
      make_compute_schedule(ScheduleKind::Interleaved1F1B, pp, microbatches, chunks, 1);
  // One chunk is plain 1F1B (Megatron uses its non-interleaved schedule then).
  const int total = microbatches * chunks;
  const int round_size = microbatches / interleaved_rounds(pp, microbatches);
  for (int rank = 0; rank < pp; ++rank) {
    const int warmup = chunks == 1
                           ? std::min(pp - rank - 1, microbatches)
                           : std::min((pp - rank - 1) * 2 + (chunks - 1) * round_size, total);
    for (const PassSlot& slot : one_f_one_b_order(warmup, total)) {
      const VirtualMicrobatch v = virtual_microbatch(slot.index, round_size, chunks, slot.forward);
      const OpKind kind = slot.forward ? OpKind::Forward : OpKind::Backward;
      const int stage = schedule.layout().stage_of(rank, v.chunk);
      schedule.devices[rank].push_back(
          make_compute_op(kind, rank, stage, v.chunk, v.microbatch, 0, 0));
    }
  }
  return schedule;
}

}  // namespace pipelab
