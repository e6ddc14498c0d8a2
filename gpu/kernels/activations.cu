#include "gpu/kernels/activations.h"

#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

// One instantiation per activation, so the switch folds away in the loop.
template <Activation kind>
__global__ void forward_kernel(const float* x, float* y, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = activation_math::value(kind, x[i]);
}

template <Activation kind>
__global__ void backward_kernel(const float* x, const float* dy, float* dx, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dx[i] = dy[i] * activation_math::derivative(kind, x[i]);
}

template <Activation kind>
void launch_forward(const float* x, float* y, int64_t count, cudaStream_t stream) {
  forward_kernel<kind><<<grid_for(count), kBlockThreads, 0, stream>>>(x, y, count);
}

template <Activation kind>
void launch_backward(const float* x, const float* dy, float* dx, int64_t count,
                     cudaStream_t stream) {
  backward_kernel<kind><<<grid_for(count), kBlockThreads, 0, stream>>>(x, dy, dx, count);
}

}  // namespace

void activation_forward(Activation kind, const float* x, float* y, int64_t count,
                        cudaStream_t stream) {
  if (count == 0) return;
  switch (kind) {
    case Activation::Relu:
      launch_forward<Activation::Relu>(x, y, count, stream);
      break;
    case Activation::Gelu:
      launch_forward<Activation::Gelu>(x, y, count, stream);
      break;
    case Activation::Tanh:
      launch_forward<Activation::Tanh>(x, y, count, stream);
      break;
    case Activation::Sigmoid:
      launch_forward<Activation::Sigmoid>(x, y, count, stream);
      break;
  }
  PIPELAB_CHECK_LAUNCH();
}

void activation_backward(Activation kind, const float* x, const float* dy, float* dx, int64_t count,
                         cudaStream_t stream) {
  if (count == 0) return;
  switch (kind) {
    case Activation::Relu:
      launch_backward<Activation::Relu>(x, dy, dx, count, stream);
      break;
    case Activation::Gelu:
      launch_backward<Activation::Gelu>(x, dy, dx, count, stream);
      break;
    case Activation::Tanh:
      launch_backward<Activation::Tanh>(x, dy, dx, count, stream);
      break;
    case Activation::Sigmoid:
      launch_backward<Activation::Sigmoid>(x, dy, dx, count, stream);
      break;
  }
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
