#include "gpu/kernels/attention_softmax.h"

#include <math.h>

#include <type_traits>

#include "gpu/kernels/attention_math.h"
#include "gpu/kernels/bf16_math.h"
#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

__global__ void softmax_kernel(const float* scores, float* probabilities, int64_t seq, float scale,
                               bool causal, uint16_t* probabilities_bf16,
                               attention_math::QueryRows queries) {
  const int64_t row = blockIdx.x;
  const int64_t visible =
      attention_math::visible_keys(attention_math::query_position(row, seq, queries), seq, causal);
  const float* in = scores + row * seq;
  float* out = probabilities + row * seq;
  float local_max = -INFINITY;
  for (int64_t j = threadIdx.x; j < visible; j += blockDim.x)
    local_max = fmaxf(local_max, in[j] * scale);
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

// The same two kernels for rows of at most kPerThread x kBlockThreads keys,
// each thread holding its columns in registers: one read of the scores and
// one write of P (and its bf16 copy) instead of three passes over the row.
// The arithmetic and its order are the kernels' above, so the bits are too.
template <int kPerThread>
__global__ void softmax_in_registers_kernel(const float* scores, float* probabilities, int64_t seq,
                                            float scale, bool causal, uint16_t* probabilities_bf16,
                                            attention_math::QueryRows queries) {
  const int64_t row = blockIdx.x;
  const int64_t visible =
      attention_math::visible_keys(attention_math::query_position(row, seq, queries), seq, causal);
  const float* in = scores + row * seq;
  float value[kPerThread];
  float local_max = -INFINITY;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int64_t j = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
    value[k] = j < visible ? in[j] * scale : 0.0f;
    if (j < visible) local_max = fmaxf(local_max, value[k]);
  }
  const float max_score = block_max(local_max);
  double sum = 0.0;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int64_t j = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
    if (j < visible) {
      value[k] = attention_math::exp_shifted(value[k], max_score);
      sum += value[k];
    }
  }
  const float inverse_sum = static_cast<float>(1.0 / block_sum(sum));
  float* out = probabilities + row * seq;
  uint16_t* rounded = probabilities_bf16 ? probabilities_bf16 + row * seq : nullptr;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int64_t j = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
    if (j >= seq) break;
    const float p = j < visible ? value[k] * inverse_sum : 0.0f;
    out[j] = p;
    if (rounded) rounded[j] = bf16_math::to_bf16_bits(p);
  }
}

template <int kPerThread>
__global__ void backward_in_registers_kernel(const float* probabilities, float* gradient,
                                             int64_t seq, uint16_t* gradient_bf16) {
  const int64_t row = blockIdx.x;
  const float* p = probabilities + row * seq;
  float* g = gradient + row * seq;
  float p_value[kPerThread], g_value[kPerThread];
  double dot = 0.0;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int64_t j = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
    p_value[k] = j < seq ? p[j] : 0.0f;
    g_value[k] = j < seq ? g[j] : 0.0f;
    if (j < seq) dot += static_cast<double>(p_value[k]) * g_value[k];
  }
  const float row_dot = static_cast<float>(block_sum(dot));
  uint16_t* rounded = gradient_bf16 ? gradient_bf16 + row * seq : nullptr;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int64_t j = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
    if (j >= seq) break;
    const float ds = attention_math::softmax_gradient(p_value[k], g_value[k], row_dot);
    if (rounded)
      rounded[j] = bf16_math::to_bf16_bits(ds);
    else
      g[j] = ds;
  }
}

// Calls launch(std::integral_constant<int, P>) with P the values per thread
// that hold a row of `seq` keys in registers (1, 2, 4 or 8); false, calling
// nothing, for rows too long for that.
template <typename Launch>
bool launch_in_registers(int64_t seq, Launch launch) {
  if (seq <= 1 * kBlockThreads) return launch(std::integral_constant<int, 1>{}), true;
  if (seq <= 2 * kBlockThreads) return launch(std::integral_constant<int, 2>{}), true;
  if (seq <= 4 * kBlockThreads) return launch(std::integral_constant<int, 4>{}), true;
  if (seq <= 8 * kBlockThreads) return launch(std::integral_constant<int, 8>{}), true;
  return false;
}

}  // namespace

void scaled_masked_softmax(const float* scores, float* probabilities, int64_t rows, int64_t seq,
                           float scale, bool causal, cudaStream_t stream,
                           uint16_t* probabilities_bf16, const attention_math::QueryRows& queries) {
  if (rows == 0 || seq == 0) return;
  const unsigned blocks = static_cast<unsigned>(rows);
  const bool in_registers = launch_in_registers(seq, [&](auto per_thread) {
    softmax_in_registers_kernel<decltype(per_thread)::value><<<blocks, kBlockThreads, 0, stream>>>(
        scores, probabilities, seq, scale, causal, probabilities_bf16, queries);
  });
  if (!in_registers)
    softmax_kernel<<<blocks, kBlockThreads, 0, stream>>>(scores, probabilities, seq, scale, causal,
                                                         probabilities_bf16, queries);
  PIPELAB_CHECK_LAUNCH();
}

void softmax_backward(const float* probabilities, float* gradient, int64_t rows, int64_t seq,
                      cudaStream_t stream, uint16_t* gradient_bf16) {
  if (rows == 0 || seq == 0) return;
  const unsigned blocks = static_cast<unsigned>(rows);
  const bool in_registers = launch_in_registers(seq, [&](auto per_thread) {
    backward_in_registers_kernel<decltype(per_thread)::value>
        <<<blocks, kBlockThreads, 0, stream>>>(probabilities, gradient, seq, gradient_bf16);
  });
  if (!in_registers)
    backward_kernel<<<blocks, kBlockThreads, 0, stream>>>(probabilities, gradient, seq,
                                                          gradient_bf16);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
