#include "gpu/kernels/attention_softmax.h"

#include <math.h>

#include "gpu/kernels/attention_math.h"
#include "gpu/kernels/bf16_math.h"
#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

__global__ void softmax_kernel(const float* scores, float* probabilities, int64_t seq, float scale,
                               bool causal, uint16_t* probabilities_bf16) {
  const int64_t row = blockIdx.x;
  const int64_t visible = attention_math::visible_keys(row % seq, seq, causal);
  const float* in = scores + row * seq;
  float* out = probabilities + row * seq;
  float local_max = -INFINITY;
  for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) local_max = fmaxf(local_max, in[j] * scale);
  const float max_score = block_max(local_max);
  // Each thread rewrites only the columns it read, so in may alias out.
  double sum = 0.0;
  for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
    const float e = attention_math::exp_shifted(in[j] * scale, max_score);
    out[j] = e;
    sum += e;
  }
  const float inverse_sum = static_cast<float>(1.0 / block_sum(sum));
  uint16_t* rounded = probabilities_bf16 ? probabilities_bf16 + row * seq : nullptr;
  for (int64_t j = threadIdx.x; j < seq; j += blockDim.x) {
    const float p = j < visible ? out[j] * inverse_sum : 0.0f;
    out[j] = p;
    if (rounded) rounded[j] = bf16_math::to_bf16_bits(p);
  }
}

__global__ void backward_kernel(const float* probabilities, float* gradient, int64_t seq,
                                uint16_t* gradient_bf16) {
  const int64_t row = blockIdx.x;
  const float* p = probabilities + row * seq;
  float* g = gradient + row * seq;
  double dot = 0.0;
  for (int64_t j = threadIdx.x; j < seq; j += blockDim.x) dot += static_cast<double>(p[j]) * g[j];
  const float row_dot = static_cast<float>(block_sum(dot));
  if (gradient_bf16) {
    uint16_t* rounded = gradient_bf16 + row * seq;
    for (int64_t j = threadIdx.x; j < seq; j += blockDim.x)
      rounded[j] = bf16_math::to_bf16_bits(attention_math::softmax_gradient(p[j], g[j], row_dot));
    return;
  }
  for (int64_t j = threadIdx.x; j < seq; j += blockDim.x)
    g[j] = attention_math::softmax_gradient(p[j], g[j], row_dot);
}

}  // namespace

void scaled_masked_softmax(const float* scores, float* probabilities, int64_t rows, int64_t seq,
                           float scale, bool causal, cudaStream_t stream,
                           uint16_t* probabilities_bf16) {
  if (rows == 0 || seq == 0) return;
  softmax_kernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, stream>>>(
      scores, probabilities, seq, scale, causal, probabilities_bf16);
  PIPELAB_CHECK_LAUNCH();
}

void softmax_backward(const float* probabilities, float* gradient, int64_t rows, int64_t seq,
                      cudaStream_t stream, uint16_t* gradient_bf16) {
  if (rows == 0 || seq == 0) return;
  backward_kernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, stream>>>(
      probabilities, gradient, seq, gradient_bf16);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
