// Shapes and costs of the layers that work on images (conv2d, maxpool,
// avgpool, global_avgpool, flatten, batchnorm, residual_block), for
// describe_layers (model_spec.h). Every mistake a user can make in one of them
// (a window larger than its input, a pool after the image was flattened) is a
// std::invalid_argument naming the layer and the fix.
#pragma once

#include <cstdint>
#include <string>

#include "core/model/model_spec.h"

namespace pipelab {

// `image` is the image reaching the layer (invalid when the values are a flat
// vector of `width` features); `label` names the layer in messages.
LayerInfo describe_image_layer(const LayerSpec& spec, const ImageShape& image, int64_t width,
                               const std::string& label);

// A residual block's two 3 x 3 convolutions and, when the shape changes, its
// 1 x 1 projection shortcut (He et al.'s basic block, option B).
struct ResidualShape {
  ImageShape in;
  ImageShape out;
  int64_t stride = 1;
  bool projection = false;  // in.channels != out.channels or stride != 1
};
ResidualShape residual_shape(const ImageShape& in, int64_t out_channels, int64_t stride);

}  // namespace pipelab
