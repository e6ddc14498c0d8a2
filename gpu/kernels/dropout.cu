#include "gpu/kernels/dropout.h"

#include "gpu/kernels/device_rng.h"
#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

__global__ void dropout_kernel(const float* in, float* out, int64_t rows, int64_t cols,
                               DropoutMask mask) {
  const int64_t count = rows * cols;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / cols;
    const int64_t c = i - r * cols;
    const uint64_t row_key = dropout_row_key(mask.layer_key, mask.step, mask.first_sample + r);
    const bool keep = dropout_row_keeps(row_key, mask.feature_offset + c, mask.p);
    out[i] = keep ? in[i] * mask.scale : 0.0f;
  }
}

}  // namespace

void dropout_apply(const float* in, float* out, int64_t rows, int64_t cols, const DropoutMask& mask,
                   cudaStream_t stream) {
  if (rows * cols == 0) return;
  dropout_kernel<<<grid_for(rows * cols), kBlockThreads, 0, stream>>>(in, out, rows, cols, mask);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
