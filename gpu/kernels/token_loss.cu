#include "gpu/kernels/token_loss.h"

#include <math.h>

#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/launch.cuh"
#include "gpu/kernels/token_loss_math.h"

namespace pipelab::gpu::kernels {
namespace {

__global__ void row_max_kernel(const float* logits, int64_t held, float* row_max) {
  const int64_t row = blockIdx.x;
  const float* z = logits + row * held;
  float best = -INFINITY;
  for (int64_t c = threadIdx.x; c < held; c += blockDim.x) best = fmaxf(best, z[c]);
  best = block_max(best);
  if (threadIdx.x == 0) row_max[row] = best;
}

__global__ void slots_kernel(const float* slots, int tp, int64_t rows, float* row_max) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float best = slots[r];
    for (int k = 1; k < tp; ++k) best = fmaxf(best, slots[k * rows + r]);
    row_max[r] = best;
  }
}

__global__ void local_sums_kernel(const float* logits, const float* row_max, const int32_t* labels,
                                  int64_t rows, int64_t held, int64_t begin, float* sums) {
  const int64_t row = blockIdx.x;
  const int32_t label = labels[row];
  if (label < 0) {  // dropped by the mask: the block exits together
    if (threadIdx.x == 0) sums[row] = sums[rows + row] = sums[2 * rows + row] = 0.0f;
    return;
  }
  const float* z = logits + row * held;
  const float max_logit = row_max[row];
  const int64_t label_column = label - begin;
  const int64_t before = label_column < 0 ? 0 : (label_column > held ? held : label_column);
  double sum_exp = 0.0;
  double ties = 0.0;
  for (int64_t c = threadIdx.x; c < held; c += blockDim.x) {
    sum_exp += token_loss_math::exp_shifted(z[c], max_logit);
    if (c < before && z[c] == max_logit) ties += 1.0;
  }
  sum_exp = block_sum(sum_exp);
  ties = block_sum(ties);
  if (threadIdx.x == 0) {
    sums[row] = static_cast<float>(sum_exp);
    sums[rows + row] = label_column >= 0 && label_column < held ? z[label_column] : 0.0f;
    sums[2 * rows + row] = static_cast<float>(ties);
  }
}

__global__ void finish_kernel(const float* logits, const float* row_max, const float* sums,
                              const int32_t* labels, int64_t rows, int64_t held, int64_t begin,
                              float inverse_tokens, float outer, float* grad, double* row_loss,
                              int32_t* row_correct) {
  const int64_t row = blockIdx.x;
  const int32_t label = labels[row];
  const bool kept = label >= 0;
  const float max_logit = row_max[row];
  const float sum_exp = sums[row];
  const float label_logit = sums[rows + row];
  if (threadIdx.x == 0) {
    row_loss[row] = kept ? token_loss_math::row_loss(sum_exp, max_logit, label_logit) : 0.0;
    row_correct[row] =
        kept && token_loss_math::correct(label_logit, max_logit, sums[2 * rows + row]) ? 1 : 0;
  }
  if (!grad) return;
  const float* z = logits + row * held;
  float* g = grad + row * held;
  for (int64_t c = threadIdx.x; c < held; c += blockDim.x)
    g[c] = kept ? token_loss_math::gradient(z[c], max_logit, sum_exp, inverse_tokens,
                                            c == label - begin, outer)
                : 0.0f;
}

}  // namespace

void token_row_max(const float* logits, int64_t rows, int64_t held, float* row_max,
                   cudaStream_t stream) {
  if (rows == 0) return;
  row_max_kernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, stream>>>(logits, held, row_max);
  PIPELAB_CHECK_LAUNCH();
}

void max_over_slots(const float* slots, int tp, int64_t rows, float* row_max,
                    cudaStream_t stream) {
  if (rows == 0) return;
  slots_kernel<<<grid_for(rows), kBlockThreads, 0, stream>>>(slots, tp, rows, row_max);
  PIPELAB_CHECK_LAUNCH();
}

void token_local_sums(const float* logits, const float* row_max, const int32_t* labels,
                      int64_t rows, int64_t held, int64_t begin, float* sums,
                      cudaStream_t stream) {
  if (rows == 0) return;
  local_sums_kernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, stream>>>(
      logits, row_max, labels, rows, held, begin, sums);
  PIPELAB_CHECK_LAUNCH();
}

void token_loss_finish(const float* logits, const float* row_max, const float* sums,
                       const int32_t* labels, int64_t rows, int64_t held, int64_t begin,
                       float inverse_tokens, float outer, float* grad, double* row_loss,
                       int32_t* row_correct, cudaStream_t stream) {
  if (rows == 0) return;
  finish_kernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, stream>>>(
      logits, row_max, sums, labels, rows, held, begin, inverse_tokens, outer, grad, row_loss,
      row_correct);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
