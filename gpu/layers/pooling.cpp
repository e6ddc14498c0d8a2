#include "gpu/layers/pooling.h"

#include <cassert>
#include <cstdint>

#include "gpu/kernels/pooling.h"
#include "gpu/layers/window_geometry.h"

namespace pipelab::gpu {
namespace {

// A max pool's kept argmax: int32 indices stored in a tensor's floats (the
// same 4 bytes each), so that offloading moves it as it moves any kept tensor.
struct PoolArgmax : MovableLayerState<DeviceTensor> {
  DeviceTensor argmax;
  int64_t bytes() const override { return argmax.bytes(); }
  std::vector<DeviceTensor*> tensors() override { return {&argmax}; }
};

int32_t* indices(DeviceTensor& argmax) { return reinterpret_cast<int32_t*>(argmax.data()); }
const int32_t* indices(const DeviceTensor& argmax) {
  return reinterpret_cast<const int32_t*>(argmax.data());
}

}  // namespace

GpuWindowPool::GpuWindowPool(LayerType type, int index, const ImageShape& in, const Window& window,
                             DeviceContext& context)
    : GpuLayer(type, index, in.size(), window_output(in, window, in.channels).size(), context),
      geometry_(window_geometry(in, window_output(in, window, in.channels), window)) {
  assert(type == LayerType::MaxPool || type == LayerType::AvgPool);
}

DeviceTensor GpuWindowPool::make_argmax(int64_t rows, MemoryCategory category) const {
  static_assert(sizeof(int32_t) == sizeof(float));
  return DeviceTensor::uninitialized(rows, out_features(), &context().allocator(), category);
}

DeviceTensor GpuWindowPool::run_forward(const DeviceTensor& x, DeviceTensor* argmax) const {
  assert(x.cols() == in_features());
  DeviceTensor y = make_activation(x.rows(), out_features());
  if (is_max())
    kernels::max_pool_forward(x.data(), geometry_, x.rows(), y.data(), indices(*argmax),
                              y.stream());
  else
    kernels::avg_pool_forward(x.data(), geometry_, x.rows(), y.data(), y.stream());
  return y;
}

DeviceTensor GpuWindowPool::forward(const DeviceTensor& x, const ForwardInfo&) {
  DeviceTensor argmax =
      is_max() ? make_argmax(x.rows(), MemoryCategory::Workspace) : DeviceTensor();
  return run_forward(x, &argmax);
}

DeviceTensor GpuWindowPool::forward_keeping(const DeviceTensor& x, const ForwardInfo& info,
                                            std::unique_ptr<LayerState>& state) {
  if (!is_max()) return forward(x, info);
  auto kept = std::make_unique<PoolArgmax>();
  kept->argmax = make_argmax(x.rows(), MemoryCategory::Activations);
  DeviceTensor y = run_forward(x, &kept->argmax);
  state = std::move(kept);
  return y;
}

DeviceTensor GpuWindowPool::backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                           const ForwardInfo& info) {
  return backward_input_with(x, dy, info, nullptr);
}

DeviceTensor GpuWindowPool::backward_input_with(const DeviceTensor& x, const DeviceTensor& dy,
                                                const ForwardInfo&, LayerState* state) {
  assert(dy.cols() == out_features() && dy.rows() == x.rows());
  DeviceTensor dx = make_activation(x.rows(), in_features());
  const DeviceTensor* argmax = nullptr;
  DeviceTensor found;  // no state kept: find the argmax again
  if (is_max()) {
    if (auto* kept = dynamic_cast<PoolArgmax*>(state)) {
      argmax = &kept->argmax;
    } else {
      found = make_argmax(x.rows(), MemoryCategory::Workspace);
      run_forward(x, &found);
      argmax = &found;
    }
  }
  kernels::pool_backward(dy.data(), argmax ? indices(*argmax) : nullptr, geometry_, x.rows(),
                         dx.data(), dx.stream());
  return dx;
}

GpuGlobalAvgPool::GpuGlobalAvgPool(int index, const ImageShape& in, DeviceContext& context)
    : GpuLayer(LayerType::GlobalAvgPool, index, in.size(), in.channels, context), in_(in) {}

DeviceTensor GpuGlobalAvgPool::forward(const DeviceTensor& x, const ForwardInfo&) {
  assert(x.cols() == in_features());
  DeviceTensor y = make_activation(x.rows(), out_features());
  kernels::global_avg_pool_forward(x.data(), x.rows(), in_.channels, in_.pixels(), y.data(),
                                   y.stream());
  return y;
}

DeviceTensor GpuGlobalAvgPool::backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                              const ForwardInfo&) {
  assert(dy.cols() == out_features() && dy.rows() == x.rows());
  DeviceTensor dx = make_activation(x.rows(), in_features());
  kernels::global_avg_pool_backward(dy.data(), x.rows(), in_.channels, in_.pixels(), dx.data(),
                                    dx.stream());
  return dx;
}

GpuFlatten::GpuFlatten(int index, int64_t width, DeviceContext& context)
    : GpuLayer(LayerType::Flatten, index, width, width, context) {}

DeviceTensor GpuFlatten::forward(const DeviceTensor& x, const ForwardInfo&) {
  return x.clone(&context().allocator(), MemoryCategory::Activations);
}

DeviceTensor GpuFlatten::backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                        const ForwardInfo&) {
  (void)x;
  return dy.clone(&context().allocator(), MemoryCategory::Activations);
}

}  // namespace pipelab::gpu
