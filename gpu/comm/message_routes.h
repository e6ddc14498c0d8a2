// MessageRoutes: how an activation or a gradient moves from one virtual
// device to another on the CUDA backend.
//
//  - Both on one GPU (NCCL refuses two ranks on one GPU), or NCCL missing: a
//    device-to-device copy (cudaMemcpyAsync, or cudaMemcpyPeerAsync across
//    GPUs) on the sender's communication stream.
//  - On two GPUs, with NCCL: ncclSend on the sender's communication stream
//    and ncclRecv on the receiver's receive stream (its own, so a receive
//    never queues behind the receiver's own sends, which wait for their
//    peers), through the communicator of those two GPUs (CommWorld: one per
//    GPU pair, shared by every pair of virtual devices on them).
//
// The sender issues the whole transfer at its SEND op, both NCCL halves in one
// NCCL group from its own thread, into a buffer it takes from the receiver's
// allocator (idle memory, counted there as CommBuffers), and posts the buffer
// with the event that marks its arrival into the receiver's mailbox. The
// receiver's RECV op only matches the tag and makes its compute stream wait
// for that event: no host thread ever waits for the GPU here.
//
// Why this cannot deadlock: an NCCL send blocks its stream until the matching
// receive runs, so two devices that each send before they receive could wait
// on each other forever if each issued its own half (the schedule's sends are
// asynchronous, as in the simulator). Issuing both halves together means a
// send never waits for work its peer has not issued yet. And every NCCL launch
// of the run (these transfers and the collectives of device_group.h) is
// made under one lock (CommWorld::lock_for_launch), so all streams see the
// blocking kernels in one global order: each kernel then only waits for work
// issued before it.
#pragma once

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "core/schedule/schedule.h"
#include "gpu/comm/virtual_device.h"

#include "gpu/comm/comm_world.h"

namespace pipelab::gpu {

class MessageRoutes {
 public:
  // `links`: the pairs of virtual devices that exchange messages (both orders
  // count as one). With NCCL, pairs on two GPUs get their GPU pair's
  // communicator from `world` now.
  MessageRoutes(const std::vector<std::unique_ptr<VirtualDevice>>& devices,
                const std::vector<std::pair<int, int>>& links, CommWorld& world);
  ~MessageRoutes();
  MessageRoutes(const MessageRoutes&) = delete;
  MessageRoutes& operator=(const MessageRoutes&) = delete;

  // Whether messages from `from` to `to` go through NCCL.
  bool uses_nccl(int from, int to) const;
  int nccl_links() const { return static_cast<int>(links_.size()); }

  // Queues the transfer of `source` (on `from`'s allocator, produced on its
  // compute stream, which `from`'s comm stream must already wait for) to a new
  // tensor on `to`, on `from`'s comm stream (and `to`'s receive stream, for
  // NCCL). Records the streams that use `source` on it, so it may be freed
  // right after. Throws RunStopped once the communicators were aborted.
  DeviceMessage transfer(VirtualDevice& from, VirtualDevice& to, DeviceTensor& source) const;

 private:
  CommWorld& world_;
#ifdef PIPELAB_HAVE_NCCL
  // Per linked pair (lower device first) on two GPUs: their GPUs' communicator.
  std::map<std::pair<int, int>, const NcclGroup*> links_;
#else
  std::map<std::pair<int, int>, int> links_;  // always empty
#endif
};

// The pairs of virtual devices a lowered schedule sends messages between.
std::vector<std::pair<int, int>> message_links(const Schedule& schedule);

}  // namespace pipelab::gpu
