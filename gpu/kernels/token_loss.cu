#include "gpu/kernels/token_loss.h"

#include <math.h>

#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/launch.cuh"
#include "gpu/kernels/token_loss_math.h"

namespace pipelab::gpu::kernels {
namespace {

// Calls visit(column, value) for the columns [0, held) of row z that this
// thread takes: four at a time (one 16-byte load) when `by_four` (the rows
// start on 16-byte boundaries and held is a multiple of 4), so the passes
// over the vocabulary-wide rows run near memory speed.
template <typename Visit>
__device__ void visit_row(const float* z, int64_t held, bool by_four, Visit visit) {
  if (by_four) {
    const float4* quads = reinterpret_cast<const float4*>(z);
#pragma unroll 4
    for (int64_t q = threadIdx.x; q < held / 4; q += blockDim.x) {
      const float4 v = quads[q];
      visit(4 * q, v.x);
      visit(4 * q + 1, v.y);
      visit(4 * q + 2, v.z);
      visit(4 * q + 3, v.w);
    }
    return;
  }
  for (int64_t c = threadIdx.x; c < held; c += blockDim.x) visit(c, z[c]);
}

// Whether rows of `held` floats from `values` can be read four at a time.
bool rows_by_four(const float* values, int64_t held) {
  return held % 4 == 0 && reinterpret_cast<uintptr_t>(values) % 16 == 0;
}

__global__ void row_max_kernel(const float* logits, int64_t held, bool by_four, float* row_max) {
  const int64_t row = blockIdx.x;
  const float* z = logits + row * held;
  float best = -INFINITY;
  visit_row(z, held, by_four, [&](int64_t, float value) { best = fmaxf(best, value); });
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
                                  int64_t rows, int64_t held, int64_t begin, bool by_four,
                                  float* sums) {
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
  visit_row(z, held, by_four, [&](int64_t c, float value) {
    sum_exp += token_loss_math::exp_shifted(value, max_logit);
    if (c < before && value == max_logit) ties += 1.0;
  });
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
                              float inverse_tokens, float outer, bool by_four, float* grad,
                              double* row_loss, int32_t* row_correct) {
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
  const auto gradient = [&](int64_t c, float value) {
    return kept ? token_loss_math::gradient(value, max_logit, sum_exp, inverse_tokens,
                                            c == label - begin, outer)
                : 0.0f;
  };
  if (by_four) {  // (grad's rows too start on 16-byte boundaries)
    const float4* quads = reinterpret_cast<const float4*>(z);
    float4* out = reinterpret_cast<float4*>(g);
#pragma unroll 4
    for (int64_t q = threadIdx.x; q < held / 4; q += blockDim.x) {
      const float4 v = quads[q];
      const int64_t c = 4 * q;
      out[q] = make_float4(gradient(c, v.x), gradient(c + 1, v.y), gradient(c + 2, v.z),
                           gradient(c + 3, v.w));
    }
    return;
  }
  for (int64_t c = threadIdx.x; c < held; c += blockDim.x) g[c] = gradient(c, z[c]);
}

}  // namespace

void token_row_max(const float* logits, int64_t rows, int64_t held, float* row_max,
                   cudaStream_t stream) {
  if (rows == 0) return;
  row_max_kernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, stream>>>(
      logits, held, rows_by_four(logits, held), row_max);
  PIPELAB_CHECK_LAUNCH();
}

void max_over_slots(const float* slots, int tp, int64_t rows, float* row_max, cudaStream_t stream) {
  if (rows == 0) return;
  slots_kernel<<<grid_for(rows), kBlockThreads, 0, stream>>>(slots, tp, rows, row_max);
  PIPELAB_CHECK_LAUNCH();
}

void token_local_sums(const float* logits, const float* row_max, const int32_t* labels,
                      int64_t rows, int64_t held, int64_t begin, float* sums, cudaStream_t stream) {
  if (rows == 0) return;
  local_sums_kernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, stream>>>(
      logits, row_max, labels, rows, held, begin, rows_by_four(logits, held), sums);
  PIPELAB_CHECK_LAUNCH();
}

void token_loss_finish(const float* logits, const float* row_max, const float* sums,
                       const int32_t* labels, int64_t rows, int64_t held, int64_t begin,
                       float inverse_tokens, float outer, float* grad, double* row_loss,
                       int32_t* row_correct, cudaStream_t stream) {
  if (rows == 0) return;
  finish_kernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, stream>>>(
      logits, row_max, sums, labels, rows, held, begin, inverse_tokens, outer,
      rows_by_four(logits, held) && (!grad || rows_by_four(grad, held)), grad, row_loss,
      row_correct);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
