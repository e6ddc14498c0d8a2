// The next-token cross-entropy's kernels (token_loss_math.h has the formulas),
// the three local steps of core/nn/token_cross_entropy.h's vocab-parallel
// loss, between which the caller all-reduces (gpu/layers/token_loss.h). One
// block per row of logits [rows, held] (a shard's columns [begin, begin +
// held) of the vocabulary). labels are int32 per row, -1 for a row the loss
// mask drops.
//   token_row_max        row_max[r] = max of row r
//   max_over_slots       row_max[r] = max over k < tp of slots[k rows + r]
//   token_local_sums     sums[r] = sum exp(z - max), sums[rows + r] = the
//                        label's logit if held, sums[2 rows + r] = the row's
//                        maxima left of the label (for the accuracy); zeros
//                        for dropped rows
//   token_loss_finish    row_loss[r] (double, 0 when dropped), row_correct[r],
//                        and, when grad is not null, the shard's gradient columns
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pipelab::gpu::kernels {

void token_row_max(const float* logits, int64_t rows, int64_t held, float* row_max,
                   cudaStream_t stream);
void max_over_slots(const float* slots, int tp, int64_t rows, float* row_max, cudaStream_t stream);
void token_local_sums(const float* logits, const float* row_max, const int32_t* labels,
                      int64_t rows, int64_t held, int64_t begin, float* sums,
                      cudaStream_t stream);
// inverse_tokens = 1 / kept rows (0 when none), outer = kept * scale.
void token_loss_finish(const float* logits, const float* row_max, const float* sums,
                       const int32_t* labels, int64_t rows, int64_t held, int64_t begin,
                       float inverse_tokens, float outer, float* grad, double* row_loss,
                       int32_t* row_correct, cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
