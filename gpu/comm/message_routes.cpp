#include "gpu/comm/message_routes.h"

#include <algorithm>
#include <cassert>
#include <set>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"

namespace pipelab::gpu {
namespace {

std::pair<int, int> ordered(int a, int b) { return {std::min(a, b), std::max(a, b)}; }

}  // namespace

std::vector<std::pair<int, int>> message_links(const Schedule& schedule) {
  std::set<std::pair<int, int>> links;
  for (const std::vector<Op>& ops : schedule.devices)
    for (const Op& op : ops)
      if (is_send(op.kind)) links.insert(ordered(op.device, op.peer));
  return {links.begin(), links.end()};
}

MessageRoutes::MessageRoutes(const std::vector<std::unique_ptr<VirtualDevice>>& devices,
                             const std::vector<std::pair<int, int>>& links, CommWorld& world)
    : world_(world) {
#ifdef PIPELAB_HAVE_NCCL
  for (const auto& [a, b] : links) {
    const std::pair<int, int> key = ordered(a, b);
    const int gpu_a = devices[static_cast<size_t>(key.first)]->gpu;
    const int gpu_b = devices[static_cast<size_t>(key.second)]->gpu;
    if (gpu_a == gpu_b || links_.count(key)) continue;
    links_[key] = &world_.group({gpu_a, gpu_b});
  }
#else
  (void)devices;
  (void)links;
#endif
}

MessageRoutes::~MessageRoutes() = default;

bool MessageRoutes::uses_nccl(int from, int to) const {
  return links_.count(ordered(from, to)) > 0;
}

DeviceMessage MessageRoutes::transfer(VirtualDevice& from, VirtualDevice& to,
                                      DeviceTensor& source) const {
  DeviceMessage message;
  message.tensor = DeviceTensor::uninitialized_idle(source.rows(), source.cols(), &to.allocator(),
                                                    MemoryCategory::CommBuffers);
  source.record_stream(from.comm_on_device());
  if (source.empty()) {
    message.arrived = CudaEvent::pooled(from.gpu);
    message.arrived.record(from.comm.get());
    return message;
  }
#ifdef PIPELAB_HAVE_NCCL
  const auto link = links_.find(ordered(from.device, to.device));
  if (link != links_.end()) {
    const NcclGroup& group = *link->second;
    message.tensor.record_stream(to.recv_on_device());
    {
      const auto lock = world_.lock_for_launch();
      group.transfer(group.rank_of(from.gpu), source, from.comm.get(), group.rank_of(to.gpu),
                     message.tensor, to.recv.get());
    }
    message.arrived = CudaEvent::pooled(to.gpu);
    message.arrived.record(to.recv.get());
    return message;
  }
#endif
  message.tensor.record_stream(from.comm_on_device());
  {
    DeviceGuard guard(from.gpu);
    const size_t bytes = static_cast<size_t>(source.bytes());
    if (from.gpu == to.gpu)
      PIPELAB_CUDA_CHECK(cudaMemcpyAsync(message.tensor.data(), source.data(), bytes,
                                         cudaMemcpyDeviceToDevice, from.comm.get()));
    else
      PIPELAB_CUDA_CHECK(cudaMemcpyPeerAsync(message.tensor.data(), to.gpu, source.data(), from.gpu,
                                             bytes, from.comm.get()));
  }
  message.arrived = CudaEvent::pooled(from.gpu);
  message.arrived.record(from.comm.get());
  return message;
}

}  // namespace pipelab::gpu
