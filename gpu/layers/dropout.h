// GpuDropout: inverted dropout as core/nn/dropout.h, with the same counter-based
// mask (device_rng.h), bit-identical to the CPU's for the same seed, layer,
// step, sample and feature: whatever the backend, micro-batch split or shard.
#pragma once

#include "gpu/layers/layer.h"

namespace pipelab::gpu {

class GpuDropout : public GpuLayer {
 public:
  // Throws std::invalid_argument unless 0 <= p < 1. feature_offset is this
  // shard's first feature under tensor parallelism.
  GpuDropout(int index, int64_t width, double p, uint64_t seed, DeviceContext& context,
             int64_t feature_offset = 0);

  DeviceTensor forward(const DeviceTensor& x, const ForwardInfo& info) override;
  DeviceTensor backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                              const ForwardInfo& info) override;

  float p() const { return p_; }

 private:
  // out = in * mask * scale (or a copy when the layer is inactive).
  DeviceTensor apply_mask(const DeviceTensor& in, const ForwardInfo& info) const;

  const float p_;
  const uint64_t layer_key_;  // the hash prefix every mask element of this layer shares
  const int64_t feature_offset_;
};

}  // namespace pipelab::gpu
