#include "gpu/comm/same_gpu_comm.h"

#include <cassert>

namespace pipelab::gpu {

void all_reduce_sum_local(std::span<DeviceTensor* const> tensors) {
  if (tensors.size() < 2) return;
  DeviceTensor& total = *tensors[0];
  for (DeviceTensor* tensor : tensors) {
    assert(tensor && tensor->same_shape(total));
    (void)tensor;
  }
  if (total.empty()) return;
  for (size_t i = 1; i < tensors.size(); ++i) {
    const DeviceTensor& part = *tensors[i];
    if (part.device() == total.device()) {
      total.add(part);  // orders the streams both ways
    } else {
      const DeviceTensor staged = part.clone(total.allocator(), MemoryCategory::CommBuffers);
      total.add(staged);
    }
  }
  for (size_t i = 1; i < tensors.size(); ++i) copy_between(total, *tensors[i]);
}

}  // namespace pipelab::gpu
