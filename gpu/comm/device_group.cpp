#include "gpu/comm/device_all_reduce.h"

#include <cassert>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"
#include "gpu/kernels/elementwise.h"

namespace pipelab::gpu {
namespace {

bool distinct_gpus(const std::vector<VirtualDevice*>& members) {
  for (size_t i = 0; i < members.size(); ++i)
    for (size_t j = i + 1; j < members.size(); ++j)
      if (members[i]->gpu == members[j]->gpu) return false;
  return true;
}

// Copies `bytes` from `source` on GPU `from` to `target` on GPU `to`, on `stream`.
void copy_async(float* target, int to, const float* source, int from, int64_t bytes,
                cudaStream_t stream) {
  if (from == to)
    PIPELAB_CUDA_CHECK(cudaMemcpyAsync(target, source, static_cast<size_t>(bytes),
                                       cudaMemcpyDeviceToDevice, stream));
  else
    PIPELAB_CUDA_CHECK(
        cudaMemcpyPeerAsync(target, to, source, from, static_cast<size_t>(bytes), stream));
}

}  // namespace

DeviceAllReduce::DeviceAllReduce(std::vector<VirtualDevice*> members, RunControl& control,
                                 CommWorld& world)
    : members_(std::move(members)),
      world_(world),
      rendezvous_(static_cast<int>(members_.size()), control),
      tensors_(members_.size(), nullptr) {
  assert(!members_.empty());
  for (VirtualDevice* member : members_) {
    produced_.emplace_back(member->gpu);
    done_.emplace_back(member->gpu);
  }
#ifdef PIPELAB_HAVE_NCCL
  if (members_.size() > 1 && distinct_gpus(members_)) {
    std::vector<int> gpus;
    for (VirtualDevice* member : members_) gpus.push_back(member->gpu);
    nccl_ = &world_.group(gpus);
  }
#endif
}

DeviceAllReduce::~DeviceAllReduce() = default;

bool DeviceAllReduce::uses_nccl() const {
#ifdef PIPELAB_HAVE_NCCL
  return nccl_ != nullptr;
#else
  return false;
#endif
}

void DeviceAllReduce::all_reduce(int rank, DeviceTensor& tensor) {
  assert(rank >= 0 && rank < size());
  VirtualDevice& member = *members_[static_cast<size_t>(rank)];
  if (size() == 1) return;
  tensors_[static_cast<size_t>(rank)] = &tensor;
  produced_[static_cast<size_t>(rank)].record(member.compute_stream());
  rendezvous_.arrive(member.device, [this] { issue_locked(); });
  // Everything is queued; the compute stream waits for the sum.
  const CudaEvent& done = uses_nccl() ? done_[static_cast<size_t>(rank)] : done_[0];
  done.make_wait(member.compute_stream());
}

void DeviceAllReduce::issue_locked() {
  if (uses_nccl())
    issue_nccl_locked();
  else
    issue_local_locked();
}

void DeviceAllReduce::issue_nccl_locked() {
#ifdef PIPELAB_HAVE_NCCL
  // The communicator orders its ranks by GPU; members_ are in rank order of
  // the group.
  std::vector<DeviceTensor*> tensors(members_.size());
  std::vector<cudaStream_t> streams(members_.size());
  for (size_t i = 0; i < members_.size(); ++i) {
    produced_[i].make_wait(members_[i]->comm.get());
    tensors_[i]->record_stream(members_[i]->comm_on_device());
    const auto rank = static_cast<size_t>(nccl_->rank_of(members_[i]->gpu));
    tensors[rank] = tensors_[i];
    streams[rank] = members_[i]->comm.get();
  }
  {
    const auto lock = world_.lock_for_launch();
    nccl_->all_reduce_sum_all(tensors, streams);
  }
  for (size_t i = 0; i < members_.size(); ++i) done_[i].record(members_[i]->comm.get());
#endif
}

void DeviceAllReduce::issue_local_locked() {
  VirtualDevice& root = *members_[0];
  DeviceTensor& total = *tensors_[0];
  const cudaStream_t stream = root.comm.get();
  for (size_t i = 0; i < members_.size(); ++i) {
    produced_[i].make_wait(stream);
    tensors_[i]->record_stream(root.comm_on_device());
    assert(tensors_[i]->same_shape(total));
  }
  DeviceGuard guard(root.gpu);
  if (!total.empty()) {
    for (size_t i = 1; i < members_.size(); ++i) {
      const DeviceTensor& part = *tensors_[i];
      if (members_[i]->gpu == root.gpu) {
        kernels::add_into(total.data(), part.data(), total.size(), stream);
        continue;
      }
      DeviceTensor staged = DeviceTensor::uninitialized_idle(
          part.rows(), part.cols(), &root.allocator(), MemoryCategory::CommBuffers);
      staged.record_stream(root.comm_on_device());
      copy_async(staged.data(), root.gpu, part.data(), members_[i]->gpu, part.bytes(), stream);
      kernels::add_into(total.data(), staged.data(), total.size(), stream);
    }
    for (size_t i = 1; i < members_.size(); ++i)
      copy_async(tensors_[i]->data(), members_[i]->gpu, total.data(), root.gpu, total.bytes(),
                 stream);
  }
  done_[0].record(stream);
}

}  // namespace pipelab::gpu
