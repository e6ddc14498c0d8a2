#include "core/nn/activations.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "core/nn/fast_math.h"

namespace pipelab {
namespace {

constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluCubic = 0.044715f;

// Applies value(x) elementwise into a new activation tensor.
template <typename Function>
Tensor map_elementwise(const Tensor& x, Function value, Tensor output) {
  assert(x.same_shape(output));
  // Tensors never share storage: __restrict__ lets the loop vectorise.
  const float* __restrict__ in = x.data();
  float* __restrict__ out = output.data();
  const int64_t n = x.size();
  for (int64_t i = 0; i < n; ++i) out[i] = value(in[i]);
  return output;
}

// dx = dy * derivative(x), elementwise.
template <typename Derivative>
Tensor chain_elementwise(const Tensor& x, const Tensor& dy, Derivative derivative, Tensor dx) {
  assert(x.same_shape(dy) && x.same_shape(dx));
  const float* __restrict__ in = x.data();
  const float* __restrict__ g = dy.data();
  float* __restrict__ out = dx.data();
  const int64_t n = x.size();
  for (int64_t i = 0; i < n; ++i) out[i] = g[i] * derivative(in[i]);
  return dx;
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// GELU runs in fixed chunks so every loop below has a compile-time trip count
// (GCC 12's -O2 cost model vectorises only such loops; -O3 would take any) and
// its tanh in two loops per chunk, the clamp apart from the rational
// (fast_math.h says why). A short tail is padded with zeros into a full chunk.
constexpr int64_t kGeluChunk = 256;

// t = clamp(k (v + 0.044715 v^3)), the argument of GELU's tanh.
inline void gelu_tanh_argument(const float* __restrict__ x, float* __restrict__ t) {
  for (int64_t i = 0; i < kGeluChunk; ++i) {
    const float v = x[i];
    t[i] = tanh_clamp(kGeluScale * (v + kGeluCubic * v * v * v));
  }
}

PIPELAB_VECTOR_CLONES void gelu_forward_chunk(const float* __restrict__ x, float* __restrict__ y) {
  alignas(64) float t[kGeluChunk];
  gelu_tanh_argument(x, t);
  for (int64_t i = 0; i < kGeluChunk; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + tanh_rational(t[i]));
  }
}

PIPELAB_VECTOR_CLONES void gelu_backward_chunk(const float* __restrict__ x,
                                               const float* __restrict__ dy,
                                               float* __restrict__ dx) {
  alignas(64) float t[kGeluChunk];
  gelu_tanh_argument(x, t);
  for (int64_t i = 0; i < kGeluChunk; ++i) {
    const float v = x[i];
    const float tanh_value = tanh_rational(t[i]);
    const float inner_derivative = kGeluScale * (1.0f + 3.0f * kGeluCubic * v * v);
    dx[i] = dy[i] * (0.5f * (1.0f + tanh_value) +
                     0.5f * v * (1.0f - tanh_value * tanh_value) * inner_derivative);
  }
}

}  // namespace

// tanh is fast_math.h's fast_tanh (within 3.4e-8 of tanh): the results are
// those of std::tanh to about an ulp, the special values (+-inf, NaN) alike.
void gelu_forward(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t start = 0;
  for (; start + kGeluChunk <= n; start += kGeluChunk) gelu_forward_chunk(x + start, y + start);
  if (start == n) return;
  const int64_t tail = n - start;
  alignas(64) float x_tail[kGeluChunk] = {};
  alignas(64) float y_tail[kGeluChunk];
  std::copy(x + start, x + n, x_tail);
  gelu_forward_chunk(x_tail, y_tail);
  std::copy(y_tail, y_tail + tail, y + start);
}

void gelu_backward(const float* __restrict__ x, const float* __restrict__ dy,
                   float* __restrict__ dx, int64_t n) {
  int64_t start = 0;
  for (; start + kGeluChunk <= n; start += kGeluChunk) {
    gelu_backward_chunk(x + start, dy + start, dx + start);
  }
  if (start == n) return;
  const int64_t tail = n - start;
  alignas(64) float x_tail[kGeluChunk] = {};
  alignas(64) float dy_tail[kGeluChunk] = {};
  alignas(64) float dx_tail[kGeluChunk];
  std::copy(x + start, x + n, x_tail);
  std::copy(dy + start, dy + n, dy_tail);
  gelu_backward_chunk(x_tail, dy_tail, dx_tail);
  std::copy(dx_tail, dx_tail + tail, dx + start);
}

Tensor ReluLayer::forward(const Tensor& x, const ForwardInfo&) {
  return map_elementwise(
      x, [](float v) { return v > 0.0f ? v : 0.0f; }, make_activation(x.rows(), x.cols()));
}

Tensor ReluLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo&) {
  // A select, not dy * step(x): it vectorises (the multiply's NaN rules keep
  // the compiler from turning it into one), and it is PyTorch's
  // threshold_backward: where x <= 0 the gradient is 0 whatever dy holds.
  Tensor dx = make_activation(x.rows(), x.cols());
  assert(x.same_shape(dy));
  const float* __restrict__ in = x.data();
  const float* __restrict__ g = dy.data();
  float* __restrict__ out = dx.data();
  const int64_t n = x.size();
  for (int64_t i = 0; i < n; ++i) {
    const float gradient = g[i];  // loaded unconditionally, so the select vectorises
    out[i] = in[i] > 0.0f ? gradient : 0.0f;
  }
  return dx;
}

Tensor GeluLayer::forward(const Tensor& x, const ForwardInfo&) {
  Tensor y = make_activation(x.rows(), x.cols());
  gelu_forward(x.data(), y.data(), x.size());
  return y;
}

Tensor GeluLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo&) {
  assert(x.same_shape(dy));
  Tensor dx = make_activation(x.rows(), x.cols());
  gelu_backward(x.data(), dy.data(), dx.data(), x.size());
  return dx;
}

Tensor TanhLayer::forward(const Tensor& x, const ForwardInfo&) {
  return map_elementwise(
      x, [](float v) { return std::tanh(v); }, make_activation(x.rows(), x.cols()));
}

Tensor TanhLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo&) {
  return chain_elementwise(
      x, dy,
      [](float v) {
        const float t = std::tanh(v);
        return 1.0f - t * t;
      },
      make_activation(x.rows(), x.cols()));
}

Tensor SigmoidLayer::forward(const Tensor& x, const ForwardInfo&) {
  return map_elementwise(x, sigmoid, make_activation(x.rows(), x.cols()));
}

Tensor SigmoidLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo&) {
  return chain_elementwise(
      x, dy,
      [](float v) {
        const float s = sigmoid(v);
        return s * (1.0f - s);
      },
      make_activation(x.rows(), x.cols()));
}

std::unique_ptr<Layer> make_activation_layer(LayerType type, int index, int64_t width,
                                             DeviceAllocator* allocator) {
  switch (type) {
    case LayerType::Relu:
      return std::make_unique<ReluLayer>(index, width, allocator);
    case LayerType::Gelu:
      return std::make_unique<GeluLayer>(index, width, allocator);
    case LayerType::Tanh:
      return std::make_unique<TanhLayer>(index, width, allocator);
    case LayerType::Sigmoid:
      return std::make_unique<SigmoidLayer>(index, width, allocator);
    default:
      break;
  }
  assert(false && "not an activation layer type");
  return nullptr;
}

}  // namespace pipelab
