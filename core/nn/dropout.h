// DropoutLayer: inverted dropout (PyTorch's): in training each element is kept
// with probability 1 - p and scaled by 1 / (1 - p); in evaluation y = x.
//
// The mask is counter-based (counter_rng.h): element (sample, feature) of a
// micro-batch is kept iff
//   unit_float(combine_key(combine_key(combine_key(
//       layer_key(seed, RandomStream::Dropout, layer), step), sample), feature)) >= p
// where sample is the row's index in the step's whole batch
// (ForwardInfo::first_sample + row) and feature is the global feature index
// (feature_offset + column, for a tensor-parallel shard). So the mask never
// depends on the micro-batch split, the data-parallel replica, the thread or
// the backend, and backward (or a recompute) regenerates it instead of storing it.
#pragma once

#include "core/nn/layer.h"

namespace pipelab {

// Whether dropout keeps one element; the definition above.
bool dropout_keeps(uint64_t seed, int layer, int step, int64_t sample, int64_t feature, float p);

class DropoutLayer : public Layer {
 public:
  // Throws std::invalid_argument unless 0 <= p < 1.
  DropoutLayer(int index, int64_t width, double p, uint64_t seed, DeviceAllocator* allocator,
               int64_t feature_offset = 0);

  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;

  float p() const { return p_; }

 private:
  // out = in * mask * scale (or a copy when the layer is inactive).
  Tensor apply_mask(const Tensor& in, const ForwardInfo& info) const;

  const float p_;
  const uint64_t seed_;
  const int64_t feature_offset_;
};

}  // namespace pipelab
