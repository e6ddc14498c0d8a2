// Pooling on the GPU, as core/nn/pooling.h:
//  - GpuWindowPool, max or average over kernel x kernel windows. The max pool's
//    forward keeps each output's argmax (its input's index within the sample)
//    as the micro-batch's state, so the backward sends dy there without
//    searching the windows again (the CPU searches x again: same inputs, same
//    first-of-equals rule, same result).
//  - GpuGlobalAvgPool: the mean of each channel, [C, H, W] -> [C].
//  - GpuFlatten: [C, H, W] -> C * H * W features, values unchanged (tensor
//    rows are already flat); a copy, as every layer returns a tensor of its own.
#pragma once

#include <memory>

#include "core/model/image_shape.h"
#include "gpu/kernels/image_math.h"
#include "gpu/layers/layer.h"

namespace pipelab::gpu {

class GpuWindowPool : public GpuLayer {
 public:
  // `type` is MaxPool or AvgPool.
  GpuWindowPool(LayerType type, int index, const ImageShape& in, const Window& window,
                DeviceContext& context);

  DeviceTensor forward(const DeviceTensor& x, const ForwardInfo& info) override;
  DeviceTensor backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                              const ForwardInfo& info) override;
  DeviceTensor forward_keeping(const DeviceTensor& x, const ForwardInfo& info,
                               std::unique_ptr<LayerState>& state) override;
  DeviceTensor backward_input_with(const DeviceTensor& x, const DeviceTensor& dy,
                                   const ForwardInfo& info, LayerState* state) override;

 private:
  bool is_max() const { return type() == LayerType::MaxPool; }
  // y, and for a max pool the argmax into `argmax` ([rows, out] int32 indices).
  DeviceTensor run_forward(const DeviceTensor& x, DeviceTensor* argmax) const;
  DeviceTensor make_argmax(int64_t rows, MemoryCategory category) const;

  image_math::WindowGeometry geometry_;
};

class GpuGlobalAvgPool : public GpuLayer {
 public:
  GpuGlobalAvgPool(int index, const ImageShape& in, DeviceContext& context);
  DeviceTensor forward(const DeviceTensor& x, const ForwardInfo& info) override;
  DeviceTensor backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                              const ForwardInfo& info) override;

 private:
  ImageShape in_;
};

class GpuFlatten : public GpuLayer {
 public:
  GpuFlatten(int index, int64_t width, DeviceContext& context);
  DeviceTensor forward(const DeviceTensor& x, const ForwardInfo& info) override;
  DeviceTensor backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                              const ForwardInfo& info) override;
};

}  // namespace pipelab::gpu
