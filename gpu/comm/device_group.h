// DeviceGroup: a group of virtual devices that run collectives together on
// the CUDA backend (the data-parallel replicas of a stage shard, the
// tensor-parallel shards of a stage, a moe layer's expert-parallel group or
// the replicas holding the same experts), with one method per collective:
//   all_reduce      the in-place sum
//   all_to_all      member r's slice j to member j's slice r (the moe layer's
//                   dispatch and combine)
//   all_gather      member r's slice r to every member (sequence parallelism)
//   reduce_scatter  member r's slice r summed over the members (sequence
//                   parallelism)
// The slices are the CPU backend's (collective_steps.h has the layouts).
//
// Every member calls the same collectives in the same order, each with its
// tensor produced on its compute stream. The members meet on the host (a
// Rendezvous: the wait observes the run's stop flag); the last to arrive
// issues the whole collective for everyone, then each member's compute stream
// waits for the result with an event: the host never waits for the GPU.
//  - Members on distinct GPUs in ascending order (NCCL's rank order, which
//    the slices follow), with NCCL: one NCCL group of every rank's call
//    (ncclAllReduce, ncclSend/ncclRecv pairs, ncclAllGather,
//    ncclReduceScatter), each on its member's communication stream, under the
//    run's NCCL launch lock (see message_routes.h for why), through the
//    communicator of the members' GPUs (comm_world.h).
//  - Otherwise (some members share a GPU: NCCL refuses that; or no NCCL): the
//    collective's device-to-device steps (collective_copies.h) on member 0's
//    communication stream, in a fixed order: the CPU ring's, so the sums are
//    the CPU backend's bit for bit, run after run.
// Sums are SUMs (the loss scale 1 / global batch makes them mean gradients).
#pragma once

#include <memory>
#include <vector>

#include "core/comm/rendezvous.h"
#include "core/comm/run_control.h"
#include "gpu/comm/collective_steps.h"
#include "gpu/comm/comm_world.h"
#include "gpu/comm/virtual_device.h"

namespace pipelab::gpu {

class DeviceGroup {
 public:
  // `members` in rank order (not owned). With NCCL and distinct GPUs in
  // ascending order, gets the communicator of their GPUs from `world` now.
  DeviceGroup(std::vector<VirtualDevice*> members, RunControl& control, CommWorld& world);
  ~DeviceGroup();
  DeviceGroup(const DeviceGroup&) = delete;
  DeviceGroup& operator=(const DeviceGroup&) = delete;

  int size() const { return static_cast<int>(members_.size()); }
  bool uses_nccl() const;

  // Member `rank`'s part of each collective, in place on `tensor` (the same
  // size on every member; a multiple of size() but for the all-reduce).
  // Returns once the collective is queued and the member's compute stream
  // waits for it. Throws RunStopped when the run stops while members are
  // missing, std::logic_error when members disagree on the collective or the
  // size.
  void all_reduce(int rank, DeviceTensor& tensor) { run(GroupCollective::AllReduce, rank, tensor); }
  void all_to_all(int rank, DeviceTensor& tensor) { run(GroupCollective::AllToAll, rank, tensor); }
  void all_gather(int rank, DeviceTensor& tensor) { run(GroupCollective::AllGather, rank, tensor); }
  void reduce_scatter(int rank, DeviceTensor& tensor) {
    run(GroupCollective::ReduceScatter, rank, tensor);
  }

 private:
  void run(GroupCollective collective, int rank, DeviceTensor& tensor);
  void issue_locked();  // run by the last member to arrive
  void issue_nccl_locked(GroupCollective collective);
  void issue_copies_locked(GroupCollective collective);

  std::vector<VirtualDevice*> members_;
  CommWorld& world_;
  Rendezvous rendezvous_;
  // By rank, for the collective in progress.
  std::vector<GroupCollective> collectives_;
  std::vector<DeviceTensor*> tensors_;
  std::vector<CudaEvent> produced_;  // by rank: its tensor is ready
  std::vector<CudaEvent> done_;      // by rank (NCCL), or [0] for everyone (copies)
#ifdef PIPELAB_HAVE_NCCL
  const NcclGroup* nccl_ = nullptr;  // owned by the CommWorld
#endif
};

}  // namespace pipelab::gpu
