// `members` devices with their allocators and mailboxes, and the ring over
// them (core/comm/ring_allreduce.h), for tests that run the CPU backend's
// collectives on plain threads.
#pragma once

#include <memory>
#include <vector>

#include "core/comm/channel.h"
#include "core/comm/ring_allreduce.h"
#include "core/comm/transport.h"

namespace pipelab::testing {

struct TestRing {
  explicit TestRing(int members) : control(members) {
    std::vector<Mailbox*> by_device;
    for (int d = 0; d < members; ++d) {
      memory.push_back(std::make_unique<DeviceAllocator>(d));
      boxes.push_back(std::make_unique<Mailbox>(d, *memory.back(), control));
      by_device.push_back(boxes.back().get());
    }
    transport = std::make_unique<InProcessTransport>(by_device);
  }
  RingGroup group(int rank) const {
    RingGroup group;
    for (size_t m = 0; m < boxes.size(); ++m) group.devices.push_back(static_cast<int>(m));
    group.transport = transport.get();
    group.mailbox = boxes[static_cast<size_t>(rank)].get();
    group.rank = rank;
    return group;
  }
  RunControl control;
  std::vector<std::unique_ptr<DeviceAllocator>> memory;
  std::vector<std::unique_ptr<Mailbox>> boxes;
  std::unique_ptr<InProcessTransport> transport;
};

}  // namespace pipelab::testing
