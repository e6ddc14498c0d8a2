#include "gpu/kernels/loss.h"

#include <math.h>

#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

// A candidate for the row's arg-max: a logit and its column.
struct ArgMax {
  float value;
  int64_t index;
};

// The larger value wins; on a tie the smaller column, so the result is the
// first maximal logit, as core/nn's scan finds it.
__device__ ArgMax better_of(ArgMax a, ArgMax b) {
  return (b.value > a.value || (b.value == a.value && b.index < a.index)) ? b : a;
}

__device__ ArgMax warp_arg_max(ArgMax candidate) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    ArgMax other;
    other.value = __shfl_down_sync(0xffffffffu, candidate.value, offset);
    other.index = __shfl_down_sync(0xffffffffu, candidate.index, offset);
    candidate = better_of(candidate, other);
  }
  return candidate;
}

// Every thread gets the block's arg-max.
__device__ ArgMax block_arg_max(ArgMax candidate) {
  __shared__ float values[32];
  __shared__ int64_t indices[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  candidate = warp_arg_max(candidate);
  if (lane == 0) {
    values[warp] = candidate.value;
    indices[warp] = candidate.index;
  }
  __syncthreads();
  const int warps = static_cast<int>(blockDim.x + 31) >> 5;
  ArgMax best{-INFINITY, INT64_MAX};
  if (lane < warps) best = ArgMax{values[lane], indices[lane]};
  best = warp_arg_max(best);
  best.value = __shfl_sync(0xffffffffu, best.value, 0);
  best.index = __shfl_sync(0xffffffffu, best.index, 0);
  return best;
}

__global__ void cross_entropy_kernel(const float* logits, const int32_t* labels, int64_t classes,
                                     double scale, float* grad, double* row_loss,
                                     int32_t* row_correct) {
  const int64_t row = blockIdx.x;
  const float* z = logits + row * classes;
  const int32_t label = labels[row];
  const bool label_valid = label >= 0 && label < classes;

  ArgMax mine{-INFINITY, INT64_MAX};
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    mine = better_of(mine, ArgMax{z[c], c});
  const ArgMax best = block_arg_max(mine);
  const double max_logit = best.value;

  double sum_exp = 0.0;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    sum_exp += exp(static_cast<double>(z[c]) - max_logit);
  const double log_sum_exp = max_logit + log(block_sum(sum_exp));

  if (threadIdx.x == 0) {
    row_loss[row] = label_valid ? log_sum_exp - static_cast<double>(z[label]) : NAN;
    row_correct[row] = label_valid && best.index == label ? 1 : 0;
  }
  if (grad) {
    float* g = grad + row * classes;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
      const double softmax = exp(static_cast<double>(z[c]) - log_sum_exp);
      g[c] = static_cast<float>(scale * (softmax - (c == label ? 1.0 : 0.0)));
    }
  }
}

__global__ void mse_kernel(const float* output, const float* target, int64_t width, double scale,
                           float* grad, double* row_loss) {
  const int64_t row = blockIdx.x;
  const float* y = output + row * width;
  const float* t = target + row * width;
  double squares = 0.0;
  for (int64_t c = threadIdx.x; c < width; c += blockDim.x) {
    const double d = static_cast<double>(y[c]) - t[c];
    squares += d * d;
  }
  squares = block_sum(squares);
  if (threadIdx.x == 0) row_loss[row] = squares / static_cast<double>(width);
  if (grad) {
    const double grad_factor = 2.0 * scale / static_cast<double>(width);
    float* g = grad + row * width;
    for (int64_t c = threadIdx.x; c < width; c += blockDim.x)
      g[c] = static_cast<float>(grad_factor * (static_cast<double>(y[c]) - t[c]));
  }
}

// Narrow rows (ten classes) need one warp, not eight.
int threads_for_width(int64_t width) {
  if (width <= 32) return 32;
  if (width <= 128) return 128;
  return kBlockThreads;
}

}  // namespace

void softmax_cross_entropy(const float* logits, const int32_t* labels, int64_t rows,
                           int64_t classes, double scale, float* grad, double* row_loss,
                           int32_t* row_correct, cudaStream_t stream) {
  if (rows == 0) return;
  cross_entropy_kernel<<<static_cast<unsigned>(rows), threads_for_width(classes), 0, stream>>>(
      logits, labels, classes, scale, grad, row_loss, row_correct);
  PIPELAB_CHECK_LAUNCH();
}

void mean_squared_error(const float* output, const float* target, int64_t rows, int64_t width,
                        double scale, float* grad, double* row_loss, cudaStream_t stream) {
  if (rows == 0) return;
  if (width == 0) {
    // core/nn adds nothing for a zero-width row.
    PIPELAB_CUDA_CHECK(
        cudaMemsetAsync(row_loss, 0, static_cast<size_t>(rows) * sizeof(double), stream));
    return;
  }
  mse_kernel<<<static_cast<unsigned>(rows), threads_for_width(width), 0, stream>>>(
      output, target, width, scale, grad, row_loss);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
