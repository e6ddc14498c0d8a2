#include "core/nn/swiglu.h"

#include <algorithm>
#include <cassert>

#include "core/nn/fast_math.h"

namespace pipelab {
namespace {

// Each row runs in fixed chunks, so every loop has a compile-time trip count
// and vectorises (activations.cpp's GELU says why); a short tail is padded
// with zeros into a full chunk.
constexpr int64_t kChunk = 256;

// e = exp(-gate) over one chunk: fast_math.h's exp (within an ulp of std::exp),
// its clamp and its evaluation in two loops so that both vectorise.
inline void exp_of_negated(const float* __restrict__ gate, float* __restrict__ e) {
  for (int64_t i = 0; i < kChunk; ++i) e[i] = exp_clamp(-gate[i]);
  for (int64_t i = 0; i < kChunk; ++i) e[i] = exp_reduced(e[i]);
}

PIPELAB_VECTOR_CLONES void forward_chunk(const float* __restrict__ gate,
                                         const float* __restrict__ up, float* __restrict__ out) {
  alignas(64) float e[kChunk];
  exp_of_negated(gate, e);
  for (int64_t i = 0; i < kChunk; ++i) out[i] = gate[i] / (1.0f + e[i]) * up[i];
}

PIPELAB_VECTOR_CLONES void backward_chunk(const float* __restrict__ gate,
                                          const float* __restrict__ up,
                                          const float* __restrict__ grad, float* __restrict__ dgate,
                                          float* __restrict__ dup) {
  alignas(64) float e[kChunk];
  exp_of_negated(gate, e);
  for (int64_t i = 0; i < kChunk; ++i) {
    const float g = gate[i];
    const float s = 1.0f / (1.0f + e[i]);
    dgate[i] = grad[i] * up[i] * s * (1.0f + g * (1.0f - s));
    dup[i] = grad[i] * g * s;
  }
}

}  // namespace

void swiglu_forward(const Tensor& x, Tensor& y) {
  const int64_t half = y.cols();
  assert(x.cols() == 2 * half && x.rows() == y.rows());
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* gate = x.row(r);
    const float* up = gate + half;
    float* out = y.row(r);
    int64_t c = 0;
    for (; c + kChunk <= half; c += kChunk) forward_chunk(gate + c, up + c, out + c);
    if (c == half) continue;
    const int64_t tail = half - c;
    alignas(64) float gate_tail[kChunk] = {};
    alignas(64) float up_tail[kChunk] = {};
    alignas(64) float out_tail[kChunk];
    std::copy(gate + c, gate + half, gate_tail);
    std::copy(up + c, up + half, up_tail);
    forward_chunk(gate_tail, up_tail, out_tail);
    std::copy(out_tail, out_tail + tail, out + c);
  }
}

void swiglu_backward(const Tensor& x, const Tensor& dy, Tensor& dx) {
  const int64_t half = dy.cols();
  assert(x.cols() == 2 * half && x.same_shape(dx) && x.rows() == dy.rows());
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* gate = x.row(r);
    const float* up = gate + half;
    const float* grad = dy.row(r);
    float* dgate = dx.row(r);
    float* dup = dgate + half;
    int64_t c = 0;
    for (; c + kChunk <= half; c += kChunk)
      backward_chunk(gate + c, up + c, grad + c, dgate + c, dup + c);
    if (c == half) continue;
    const int64_t tail = half - c;
    alignas(64) float gate_tail[kChunk] = {};
    alignas(64) float up_tail[kChunk] = {};
    alignas(64) float grad_tail[kChunk] = {};
    alignas(64) float dgate_tail[kChunk];
    alignas(64) float dup_tail[kChunk];
    std::copy(gate + c, gate + half, gate_tail);
    std::copy(up + c, up + half, up_tail);
    std::copy(grad + c, grad + half, grad_tail);
    backward_chunk(gate_tail, up_tail, grad_tail, dgate_tail, dup_tail);
    std::copy(dgate_tail, dgate_tail + tail, dgate + c);
    std::copy(dup_tail, dup_tail + tail, dup + c);
  }
}

}  // namespace pipelab
