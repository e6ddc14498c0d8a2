// DeviceAllReduce: the in-place sum of one tensor over a group of virtual
// devices (the data-parallel replicas of a stage shard, or the tensor-parallel
// shards of a stage) on the CUDA backend.
//
// Every member calls all_reduce() with its tensor, produced on its compute
// stream, in the same order of collectives. The members meet on the host (a
// Rendezvous: the wait observes the run's stop flag); the last to arrive
// issues the whole collective for everyone, then each member's compute stream
// waits for the result with an event: the host never waits for the GPU.
//  - Members on distinct GPUs, with NCCL: ncclAllReduce of every rank in one
//    NCCL group, each on its member's communication stream, under the run's
//    NCCL launch lock (see message_routes.h for why), through the
//    communicator of the members' GPUs (comm_world.h).
//  - Otherwise (some members share a GPU: NCCL refuses that; or no NCCL): on
//    member 0's communication stream, the others' tensors are added into
//    member 0's in member order (tensors on another GPU are first copied
//    over, into a CommBuffers staging buffer), then the sum is copied back to
//    every member. The same bits on every member, run after run.
// The sum is a SUM (the loss scale 1 / global batch makes it the mean gradient).
#pragma once

#include <memory>
#include <vector>

#include "core/runtime/rendezvous.h"
#include "core/runtime/run_control.h"
#include "gpu/executor/virtual_device.h"

#include "gpu/comm/comm_world.h"

namespace pipelab::gpu {

class DeviceAllReduce {
 public:
  // `members` in rank order (not owned). With NCCL and distinct GPUs, gets
  // the communicator of their GPUs from `world` now.
  DeviceAllReduce(std::vector<VirtualDevice*> members, RunControl& control, CommWorld& world);
  ~DeviceAllReduce();
  DeviceAllReduce(const DeviceAllReduce&) = delete;
  DeviceAllReduce& operator=(const DeviceAllReduce&) = delete;

  int size() const { return static_cast<int>(members_.size()); }
  bool uses_nccl() const;

  // Member `rank`'s part: sums `tensor` over the group, in place. Returns once
  // the sum is queued and the member's compute stream waits for it. Throws
  // RunStopped when the run stops while members are missing.
  void all_reduce(int rank, DeviceTensor& tensor);

 private:
  void issue_locked();  // run by the last member to arrive
  void issue_nccl_locked();
  void issue_local_locked();

  std::vector<VirtualDevice*> members_;
  CommWorld& world_;
  Rendezvous rendezvous_;
  std::vector<DeviceTensor*> tensors_;  // by rank, for the collective in progress
  std::vector<CudaEvent> produced_;     // by rank: its tensor is ready
  std::vector<CudaEvent> done_;         // by rank (NCCL), or [0] for everyone (local)
#ifdef PIPELAB_HAVE_NCCL
  const NcclGroup* nccl_ = nullptr;  // owned by the CommWorld
#endif
};

}  // namespace pipelab::gpu
