#include "gpu/comm/collective_copies.h"

#include <stdexcept>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"
#include "gpu/kernels/elementwise.h"

namespace pipelab::gpu {
namespace {

// Some floats of a member's tensor or of the scratch, and the GPU holding them.
struct Place {
  float* data = nullptr;
  int gpu = 0;
};

void copy_async(Place to, Place from, int64_t count, cudaStream_t stream) {
  const size_t bytes = static_cast<size_t>(count) * sizeof(float);
  if (from.gpu == to.gpu)
    PIPELAB_CUDA_CHECK(
        cudaMemcpyAsync(to.data, from.data, bytes, cudaMemcpyDeviceToDevice, stream));
  else
    PIPELAB_CUDA_CHECK(cudaMemcpyPeerAsync(to.data, to.gpu, from.data, from.gpu, bytes, stream));
}

// A buffer of the root's for the collective in progress (idle until the root's
// stream writes it; that stream holds it until its work is done).
DeviceTensor root_buffer(int64_t values, CachingAllocator& allocator, StreamOnDevice root) {
  DeviceTensor buffer =
      DeviceTensor::uninitialized_idle(1, values, &allocator, MemoryCategory::CommBuffers);
  buffer.record_stream(root);
  return buffer;
}

}  // namespace

void run_collective_copies(const CollectiveSteps& plan, std::span<DeviceTensor* const> tensors,
                           CachingAllocator& root_allocator, StreamOnDevice root) {
  DeviceGuard guard(root.device);
  DeviceTensor scratch;
  if (plan.scratch_values > 0) scratch = root_buffer(plan.scratch_values, root_allocator, root);
  DeviceTensor staged;  // an addition's source from another GPU
  const auto place = [&](int member, int64_t offset) {
    if (member == CollectiveStep::kScratch) return Place{scratch.data() + offset, root.device};
    DeviceTensor& tensor = *tensors[static_cast<size_t>(member)];
    return Place{tensor.data() + offset, tensor.device()};
  };
  for (const CollectiveStep& step : plan.steps) {
    if (step.count == 0) continue;
    const Place to = place(step.to, step.to_offset);
    Place from = place(step.from, step.from_offset);
    if (step.kind == CollectiveStep::Kind::Copy) {
      copy_async(to, from, step.count, root.stream);
      continue;
    }
    if (to.gpu != root.device)
      throw std::logic_error("a collective's addition must target the root's GPU");
    if (from.gpu != root.device) {
      if (staged.size() < step.count) staged = root_buffer(step.count, root_allocator, root);
      const Place here{staged.data(), root.device};
      copy_async(here, from, step.count, root.stream);
      from = here;
    }
    kernels::add_into(to.data, from.data, step.count, root.stream);
  }
}

}  // namespace pipelab::gpu
