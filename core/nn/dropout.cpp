#include "core/nn/dropout.h"

#include <stdexcept>
#include <string>

#include "core/nn/counter_rng.h"

namespace pipelab {
namespace {

uint64_t row_key(uint64_t seed, int layer, int step, int64_t sample) {
  return combine_key(
      combine_key(layer_key(seed, RandomStream::Dropout, layer), static_cast<uint64_t>(step)),
      static_cast<uint64_t>(sample));
}

}  // namespace

bool dropout_keeps(uint64_t seed, int layer, int step, int64_t sample, int64_t feature, float p) {
  return unit_float(
             combine_key(row_key(seed, layer, step, sample), static_cast<uint64_t>(feature))) >= p;
}

DropoutLayer::DropoutLayer(int index, int64_t width, double p, uint64_t seed,
                           DeviceAllocator* allocator, int64_t feature_offset)
    : Layer(LayerType::Dropout, index, width, width, allocator),
      p_(static_cast<float>(p)),
      seed_(seed),
      feature_offset_(feature_offset) {
  if (!(p >= 0.0 && p < 1.0))
    throw std::invalid_argument("dropout layer " + std::to_string(index) +
                                ": p must be in [0, 1), got " + std::to_string(p));
}

Tensor DropoutLayer::forward(const Tensor& x, const ForwardInfo& info) {
  return apply_mask(x, info);
}

// y = x * mask * scale is linear in x, so dx = dy * mask * scale: the same map.
Tensor DropoutLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) {
  (void)x;
  return apply_mask(dy, info);
}

Tensor DropoutLayer::apply_mask(const Tensor& in, const ForwardInfo& info) const {
  Tensor out = make_activation(in.rows(), in.cols());
  if (!info.training || p_ == 0.0f) {
    out.copy_from(in);
    return out;
  }
  const float scale = static_cast<float>(1.0 / (1.0 - static_cast<double>(p_)));
  const int64_t width = in.cols();
  for (int64_t r = 0; r < in.rows(); ++r) {
    // The row's key prefix is hashed once; each element adds one mix.
    const uint64_t key = row_key(seed_, index(), info.step, info.first_sample + r);
    const float* src = in.row(r);
    float* dst = out.row(r);
    for (int64_t c = 0; c < width; ++c) {
      const bool keep =
          unit_float(combine_key(key, static_cast<uint64_t>(feature_offset_ + c))) >= p_;
      dst[c] = keep ? src[c] * scale : 0.0f;
    }
  }
  return out;
}

}  // namespace pipelab
