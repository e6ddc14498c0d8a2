// MpiTransport: the Transport (core/comm/transport.h) of one rank of a
// multi-process run. A message for a device this rank runs goes into its
// mailbox as in one process; any other is copied into the rank's MpiLink,
// which sends it to the rank that runs the device.
#pragma once

#include "core/comm/transport.h"

namespace pipelab::mpi {

class MpiLink;

class MpiTransport final : public Transport {
 public:
  MpiTransport(InProcessTransport& local, MpiLink& link) : local_(local), link_(link) {}
  using Transport::post;
  void post(int to, const MessageTag& tag, const float* values, int64_t rows,
            int64_t cols) override;

 private:
  InProcessTransport& local_;
  MpiLink& link_;
};

}  // namespace pipelab::mpi
