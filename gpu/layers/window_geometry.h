// The kernels' WindowGeometry (kernels/image_math.h, which may not include
// core/) for an image layer's shapes (core/model/image_shape.h).
#pragma once

#include "core/model/image_shape.h"
#include "gpu/kernels/image_math.h"

namespace pipelab::gpu {

// A window over `in` giving `out` (out.channels is not part of it: a
// convolution's comes from its weight, a pool's equals in.channels).
inline image_math::WindowGeometry window_geometry(const ImageShape& in, const ImageShape& out,
                                                  const Window& window) {
  return {in.channels, in.height,     in.width,      out.height,
          out.width,   window.kernel, window.stride, window.padding};
}

}  // namespace pipelab::gpu
