#include "gpu/layers/dropout.h"

#include <stdexcept>
#include <string>

#include "core/nn/counter_rng.h"
#include "gpu/kernels/dropout.h"

namespace pipelab::gpu {

GpuDropout::GpuDropout(int index, int64_t width, double p, uint64_t seed, DeviceContext& context,
                       int64_t feature_offset)
    : GpuLayer(LayerType::Dropout, index, width, width, context),
      p_(static_cast<float>(p)),
      layer_key_(layer_key(seed, RandomStream::Dropout, index)),
      feature_offset_(feature_offset) {
  if (!(p >= 0.0 && p < 1.0))
    throw std::invalid_argument("dropout layer " + std::to_string(index) +
                                ": p must be in [0, 1), got " + std::to_string(p));
}

DeviceTensor GpuDropout::forward(const DeviceTensor& x, const ForwardInfo& info) {
  return apply_mask(x, info);
}

// y = x * mask * scale is linear in x, so dx = dy * mask * scale: the same map.
DeviceTensor GpuDropout::backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                        const ForwardInfo& info) {
  (void)x;
  return apply_mask(dy, info);
}

DeviceTensor GpuDropout::apply_mask(const DeviceTensor& in, const ForwardInfo& info) const {
  DeviceTensor out = make_activation(in.rows(), in.cols());
  if (!info.training || p_ == 0.0f) {
    out.copy_from(in);
    return out;
  }
  kernels::DropoutMask mask;
  mask.layer_key = layer_key_;
  mask.step = info.step;
  mask.first_sample = info.first_sample;
  mask.feature_offset = feature_offset_;
  mask.p = p_;
  mask.scale = static_cast<float>(1.0 / (1.0 - static_cast<double>(p_)));  // as core/nn
  kernels::dropout_apply(in.data(), out.data(), in.rows(), in.cols(), mask, out.stream());
  return out;
}

}  // namespace pipelab::gpu
