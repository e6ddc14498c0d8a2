#include "gpu/layers/conv2d.h"

#include <cassert>

#include "gpu/kernels/conv2d.h"
#include "gpu/layers/cublas_gemm.h"
#include "gpu/layers/window_geometry.h"

namespace pipelab::gpu {
namespace {

image_math::WindowGeometry kernel_geometry(const ConvGeometry& g) {
  return window_geometry(g.in, g.out, g.window);
}

// A tensor as a GEMM input, rounded to bf16 when `round` (bf16-mixed).
RoundedGemmInput gemm_input(const DeviceTensor& values, bool round) {
  return RoundedGemmInput(values.data(), values.size(), round, values.allocator());
}

}  // namespace

GpuConv2d::GpuConv2d(int index, const ConvGeometry& geometry, bool bias, DeviceContext& context)
    : GpuLayer(LayerType::Conv2d, index, geometry.in.size(), geometry.out.size(), context),
      geometry_(geometry),
      weight_(geometry.out.channels, geometry.taps(), &context.allocator(),
              MemoryCategory::Weights),
      bias_(bias ? 1 : 0, bias ? geometry.out.channels : 0, &context.allocator(),
            MemoryCategory::Weights),
      weight_grad_(geometry.out.channels, geometry.taps(), &context.allocator(),
                   MemoryCategory::Gradients),
      bias_grad_(bias ? 1 : 0, bias ? geometry.out.channels : 0, &context.allocator(),
                 MemoryCategory::Gradients) {}

void GpuConv2d::init(uint64_t seed, int part) {
  Conv2dLayer host(index(), geometry_, has_bias(), nullptr);
  host.init(seed, part);
  weight_.copy_from_host(host.weight());
  if (has_bias()) bias_.copy_from_host(host.bias());
}

DeviceTensor GpuConv2d::columns(const DeviceTensor& x) const {
  DeviceTensor cols =
      DeviceTensor::uninitialized(x.rows() * geometry_.taps(), geometry_.out.pixels(),
                                  &context().allocator(), MemoryCategory::Workspace);
  kernels::im2col(x.data(), kernel_geometry(geometry_), x.rows(), cols.data(), cols.stream());
  return cols;
}

DeviceTensor GpuConv2d::forward(const DeviceTensor& x, const ForwardInfo&) {
  assert(x.cols() == in_features());
  const int64_t taps = geometry_.taps();
  const int64_t positions = geometry_.out.pixels();
  const int64_t channels = geometry_.out.channels;
  DeviceTensor y = make_activation(x.rows(), out_features());
  if (x.rows() == 0) return y;
  const DeviceTensor cols = columns(x);
  const RoundedGemmInput cols_input = gemm_input(cols, weight_.has_bf16_copy());
  if (has_bias())
    kernels::broadcast_channels(y.data(), bias_.data(), y.rows(), channels, positions, y.stream());
  // y_n [channels, positions] = W [channels, taps] cols_n [taps, positions], W shared (stride 0).
  strided_batched_gemm(context().cublas(), weight_input(weight_), {channels, taps, taps, 0}, false,
                       cols_input.at(), {taps, positions, positions, taps * positions}, false,
                       y.data(),
                       {channels, positions, positions, channels * positions}, x.rows(), 1.0f,
                       has_bias() ? 1.0f : 0.0f);
  return y;
}

DeviceTensor GpuConv2d::backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                       const ForwardInfo&) {
  (void)x;  // the input gradient needs only W
  assert(dy.cols() == out_features());
  const int64_t taps = geometry_.taps();
  const int64_t positions = geometry_.out.pixels();
  const int64_t channels = geometry_.out.channels;
  DeviceTensor dx = make_activation(dy.rows(), in_features());
  if (dy.rows() == 0) return dx;
  DeviceTensor dcols = DeviceTensor::uninitialized(
      dy.rows() * taps, positions, &context().allocator(), MemoryCategory::Workspace);
  // dcols_n [taps, positions] = W^T [taps, channels] dy_n [channels, positions].
  const RoundedGemmInput dy_input = gemm_input(dy, weight_.has_bf16_copy());
  strided_batched_gemm(context().cublas(), weight_input(weight_), {channels, taps, taps, 0}, true,
                       dy_input.at(), {channels, positions, positions, channels * positions}, false,
                       dcols.data(), {taps, positions, positions, taps * positions}, dy.rows(),
                       1.0f, 0.0f);
  kernels::col2im(dcols.data(), kernel_geometry(geometry_), dy.rows(), dx.data(), dx.stream());
  return dx;
}

void GpuConv2d::backward_weight(const DeviceTensor& x, const DeviceTensor& dy) {
  assert(x.cols() == in_features() && dy.cols() == out_features() && x.rows() == dy.rows());
  const int64_t taps = geometry_.taps();
  const int64_t positions = geometry_.out.pixels();
  const int64_t channels = geometry_.out.channels;
  if (x.rows() == 0) return;
  const DeviceTensor cols = columns(x);
  const bool round = weight_grad_.accumulates_bf16_products();
  const RoundedGemmInput dy_input = gemm_input(dy, round);
  const RoundedGemmInput cols_input = gemm_input(cols, round);
  for (int64_t n = 0; n < x.rows(); ++n) {
    // dW [channels, taps] += dy_n [channels, positions] cols_n^T [positions, taps].
    strided_batched_gemm(context().cublas(), dy_input.at(n * channels * positions),
                         {channels, positions, positions, 0}, false,
                         cols_input.at(n * taps * positions), {taps, positions, positions, 0}, true,
                         weight_grad_.data(), {channels, taps, taps, 0}, 1, 1.0f, 1.0f);
  }
  if (has_bias())
    kernels::add_channel_sums(bias_grad_.data(), dy.data(), dy.rows(), channels, positions,
                              bias_grad_.stream());
}

std::vector<DeviceTensor*> GpuConv2d::params() {
  if (has_bias()) return {&weight_, &bias_};
  return {&weight_};
}

std::vector<DeviceTensor*> GpuConv2d::grads() {
  if (has_bias()) return {&weight_grad_, &bias_grad_};
  return {&weight_grad_};
}

}  // namespace pipelab::gpu
