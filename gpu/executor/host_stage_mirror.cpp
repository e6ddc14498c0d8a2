#include "gpu/executor/host_stage_mirror.h"

#include <cassert>
#include <cstring>

namespace pipelab::gpu {
namespace {

TensorParallelSetup host_setup(int tp, int shard, const std::vector<TensorParallelRole>& roles) {
  TensorParallelSetup setup;
  setup.degree = tp;
  setup.shard = shard;
  if (tp > 1) {
    setup.roles = roles;
    // The mirror only holds weights; its forward (which would all-reduce) never runs.
    setup.all_reduce = [](Tensor&, int, bool) { assert(false && "a host mirror never runs"); };
  }
  return setup;
}

void copy_to_host(const DeviceTensor& from, Tensor& to) {
  assert(from.size() == to.size());
  const std::vector<float> values = from.to_vector();  // waits for the stream
  if (!values.empty()) std::memcpy(to.data(), values.data(), values.size() * sizeof(float));
}

}  // namespace

HostStageMirror::HostStageMirror(const ModelSpec& model, uint64_t seed, GpuSequential& device_stage,
                                 int tp, int shard, const std::vector<TensorParallelRole>& roles)
    : device_(device_stage),
      host_(model, device_stage.begin(), device_stage.end(), seed, nullptr,
            host_setup(tp, shard, roles)) {
  assert(host_.parameters().size() == device_.parameters().size());
}

void HostStageMirror::copy_values_from_device() {
  const std::vector<GpuParameter> from = device_.parameters();
  const std::vector<Parameter> to = host_.parameters();
  for (size_t i = 0; i < from.size(); ++i) copy_to_host(*from[i].value, *to[i].value);
}

void HostStageMirror::copy_gradients_from_device() {
  const std::vector<GpuParameter> from = device_.parameters();
  const std::vector<Parameter> to = host_.parameters();
  for (size_t i = 0; i < from.size(); ++i) copy_to_host(*from[i].grad, *to[i].grad);
}

void HostStageMirror::copy_values_to_device() {
  const std::vector<GpuParameter> to = device_.parameters();
  const std::vector<Parameter> from = host_.parameters();
  for (size_t i = 0; i < to.size(); ++i) to[i].value->copy_from_host(*from[i].value);
}

}  // namespace pipelab::gpu
