#include "gpu/comm/device_group.h"

#include <cassert>
#include <stdexcept>
#include <string>

#include "gpu/comm/collective_copies.h"
#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"

namespace pipelab::gpu {
namespace {

// NCCL's communicator ranks follow ascending GPUs; the members' slices follow
// their rank in the group: the two must agree.
bool on_ascending_gpus(const std::vector<VirtualDevice*>& members) {
  for (size_t i = 1; i < members.size(); ++i)
    if (members[i - 1]->gpu >= members[i]->gpu) return false;
  return true;
}

}  // namespace

DeviceGroup::DeviceGroup(std::vector<VirtualDevice*> members, RunControl& control, CommWorld& world)
    : members_(std::move(members)),
      world_(world),
      rendezvous_(static_cast<int>(members_.size()), control),
      collectives_(members_.size(), GroupCollective::AllReduce),
      tensors_(members_.size(), nullptr) {
  assert(!members_.empty());
  for (VirtualDevice* member : members_) {
    produced_.emplace_back(member->gpu);
    done_.emplace_back(member->gpu);
  }
#ifdef PIPELAB_HAVE_NCCL
  if (members_.size() > 1 && on_ascending_gpus(members_)) {
    std::vector<int> gpus;
    for (VirtualDevice* member : members_) gpus.push_back(member->gpu);
    nccl_ = &world_.group(gpus);
  }
#endif
}

DeviceGroup::~DeviceGroup() = default;

bool DeviceGroup::uses_nccl() const {
#ifdef PIPELAB_HAVE_NCCL
  return nccl_ != nullptr;
#else
  return false;
#endif
}

void DeviceGroup::run(GroupCollective collective, int rank, DeviceTensor& tensor) {
  assert(rank >= 0 && rank < size());
  if (size() == 1) return;
  const auto r = static_cast<size_t>(rank);
  VirtualDevice& member = *members_[r];
  collectives_[r] = collective;
  tensors_[r] = &tensor;
  produced_[r].record(member.compute_stream());
  rendezvous_.arrive(member.device, [this] { issue_locked(); });
  // Everything is queued; the compute stream waits for the result.
  const CudaEvent& done = uses_nccl() ? done_[r] : done_[0];
  done.make_wait(member.compute_stream());
}

void DeviceGroup::issue_locked() {
  const GroupCollective collective = collectives_[0];
  for (size_t i = 0; i < members_.size(); ++i)
    if (collectives_[i] != collective || tensors_[i]->size() != tensors_[0]->size())
      throw std::logic_error(std::string("a device group's members disagree: member 0 runs an ") +
                             group_collective_name(collective) + " of " +
                             std::to_string(tensors_[0]->size()) + " values, member " +
                             std::to_string(i) + " an " + group_collective_name(collectives_[i]) +
                             " of " + std::to_string(tensors_[i]->size()));
  if (uses_nccl())
    issue_nccl_locked(collective);
  else
    issue_copies_locked(collective);
}

void DeviceGroup::issue_nccl_locked(GroupCollective collective) {
#ifdef PIPELAB_HAVE_NCCL
  // Members are in the communicator's rank order (on_ascending_gpus).
  std::vector<cudaStream_t> streams;
  for (size_t i = 0; i < members_.size(); ++i) {
    produced_[i].make_wait(members_[i]->comm.get());
    tensors_[i]->record_stream(members_[i]->comm_on_device());
    streams.push_back(members_[i]->comm.get());
  }
  // The all-to-all receives into a buffer of each member's, then copies back.
  std::vector<DeviceTensor> received;
  if (collective == GroupCollective::AllToAll)
    for (size_t i = 0; i < members_.size(); ++i) {
      received.push_back(DeviceTensor::uninitialized_idle(
          1, tensors_[i]->size(), &members_[i]->allocator(), MemoryCategory::CommBuffers));
      received.back().record_stream(members_[i]->comm_on_device());
    }
  std::vector<DeviceTensor*> received_pointers;
  for (DeviceTensor& buffer : received) received_pointers.push_back(&buffer);
  {
    const auto lock = world_.lock_for_launch();
    switch (collective) {
      case GroupCollective::AllReduce:
        nccl_->all_reduce_sum_all(tensors_, streams);
        break;
      case GroupCollective::AllToAll:
        nccl_->all_to_all_all(tensors_, received_pointers, streams);
        break;
      case GroupCollective::AllGather:
        nccl_->all_gather_all(tensors_, streams);
        break;
      case GroupCollective::ReduceScatter:
        nccl_->reduce_scatter_all(tensors_, streams);
        break;
    }
  }
  const int64_t slice = tensors_[0]->size() / size();
  for (size_t i = 0; i < members_.size(); ++i) {
    if (collective == GroupCollective::AllToAll && slice > 0) {
      DeviceGuard guard(members_[i]->gpu);
      for (size_t j = 0; j < members_.size(); ++j) {
        if (j == i) continue;  // its own slice stays
        const int64_t offset = static_cast<int64_t>(j) * slice;
        PIPELAB_CUDA_CHECK(cudaMemcpyAsync(
            tensors_[i]->data() + offset, received[i].data() + offset,
            static_cast<size_t>(slice) * sizeof(float), cudaMemcpyDeviceToDevice, streams[i]));
      }
    }
    done_[i].record(streams[i]);
  }
#else
  (void)collective;
#endif
}

void DeviceGroup::issue_copies_locked(GroupCollective collective) {
  VirtualDevice& root = *members_[0];
  const cudaStream_t stream = root.comm.get();
  for (size_t i = 0; i < members_.size(); ++i) {
    produced_[i].make_wait(stream);
    tensors_[i]->record_stream(root.comm_on_device());
  }
  run_collective_copies(collective_steps(collective, size(), tensors_[0]->size()), tensors_,
                        root.allocator(), root.comm_on_device());
  done_[0].record(stream);
}

}  // namespace pipelab::gpu
