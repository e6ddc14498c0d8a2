// Interleaved 1F1B (Megatron-LM's virtual pipeline): with v chunks, pipeline
// rank d holds stages d, d + p, ..., d + (v - 1) p; stage s runs on rank s % p
// as chunk s / p. Each rank walks a list of m * v "virtual micro-batches":
// micro-batches are taken in groups of p, and each group goes through chunk 0,
// then chunk 1, ... (backwards through the chunks in reverse). Rank d runs
//   (p - d - 1) * 2 + (v - 1) * p
// warm-up forwards (capped at m * v), then one forward one backward, then the
// cool-down backwards. Megatron makes every forward a warm-up one when m == p
// because its batched point-to-point calls pair sends with receives; our sends
// never block, so the formula is used for every m. The bubble shrinks by about v
// against 1F1B, at the cost of v times more point-to-point messages.
#include <algorithm>

#include "core/schedule/generator_support.h"
#include "core/schedule/generators.h"

namespace pipelab {
namespace {

struct VirtualMicrobatch {
  int chunk = 0;
  int microbatch = 0;
};

// Megatron's mapping of the k-th forward (or backward) on a rank to a chunk and
// a micro-batch: groups of p micro-batches, each group through all chunks.
VirtualMicrobatch virtual_microbatch(int k, int pp, int chunks, bool forward) {
  const int group_size = pp * chunks;
  const int in_group = k % group_size;
  VirtualMicrobatch result;
  result.chunk = in_group / pp;
  if (!forward) result.chunk = chunks - 1 - result.chunk;
  result.microbatch = (k / group_size) * pp + in_group % pp;
  return result;
}

}  // namespace

Schedule generate_interleaved_1f1b(int pp, int microbatches, int chunks) {
  check_generator_options({ScheduleKind::Interleaved1F1B, pp, microbatches, chunks, 1});
  Schedule schedule =
      make_compute_schedule(ScheduleKind::Interleaved1F1B, pp, microbatches, chunks, 1);
  // One chunk is plain 1F1B (Megatron uses its non-interleaved schedule then).
  const int total = microbatches * chunks;
  for (int rank = 0; rank < pp; ++rank) {
    const int warmup = chunks == 1 ? std::min(pp - rank - 1, microbatches)
                                   : std::min((pp - rank - 1) * 2 + (chunks - 1) * pp, total);
    for (const PassSlot& slot : one_f_one_b_order(warmup, total)) {
      const VirtualMicrobatch v = virtual_microbatch(slot.index, pp, chunks, slot.forward);
      const OpKind kind = slot.forward ? OpKind::Forward : OpKind::Backward;
      const int stage = schedule.layout().stage_of(rank, v.chunk);
      schedule.devices[rank].push_back(
          make_compute_op(kind, rank, stage, v.chunk, v.microbatch, 0, 0));
    }
  }
  return schedule;
}

}  // namespace pipelab
