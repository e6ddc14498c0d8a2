// ResidualBlockLayer: the basic residual block (basic_residual_block.h) on the
// CPU, over Conv2dLayer and BatchNormLayer.
#pragma once

#include "core/nn/basic_residual_block.h"
#include "core/nn/batch_norm.h"
#include "core/nn/conv2d.h"

namespace pipelab {

struct HostResidualParts {
  using Tensor = pipelab::Tensor;
  using Layer = pipelab::Layer;
  using Context = DeviceAllocator*;
  using Conv = Conv2dLayer;
  using Norm = BatchNormLayer;
  static void relu_in_place(Tensor& t);
  static Tensor relu_gradient(const Tensor& relu_out, const Tensor& dy);
};

using ResidualBlockLayer = BasicResidualBlock<HostResidualParts>;
extern template class BasicResidualBlock<HostResidualParts>;

}  // namespace pipelab
