// Transport: how a message reaches another virtual device's mailbox, the one
// place where the CPU backend moves tensors between devices (the sends of
// activations and gradients, and every ring step of a collective).
//
// InProcessTransport copies into the receiver's mailbox (channel.h): every
// device of a one-process run. A run spread over processes (pipelab-cli under
// mpirun) wraps it in core/mpi's MpiTransport, which sends what is addressed to
// devices other processes host over MPI and delivers what arrives from them
// into the local mailboxes. Receiving is always from the device's own mailbox.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/nn/tensor.h"
#include "core/comm/channel.h"
#include "core/comm/message_tag.h"

namespace pipelab {

class Transport {
 public:
  virtual ~Transport() = default;
  // Posts a copy of the rows x cols floats at `values` to device `to` under
  // `tag`. Never blocks: the values are copied before it returns.
  virtual void post(int to, const MessageTag& tag, const float* values, int64_t rows,
                    int64_t cols) = 0;
  void post(int to, const MessageTag& tag, const Tensor& tensor) {
    post(to, tag, tensor.data(), tensor.rows(), tensor.cols());
  }
};

class InProcessTransport final : public Transport {
 public:
  // Mailboxes by device: null for the devices this process does not host.
  explicit InProcessTransport(std::vector<Mailbox*> mailboxes) : mailboxes_(std::move(mailboxes)) {}
  using Transport::post;
  void post(int to, const MessageTag& tag, const float* values, int64_t rows,
            int64_t cols) override;
  // Whether device `device` lives in this process.
  bool hosts(int device) const;

  // Requests for a parameter server this process holds
  // (is_parameter_server_request; from replicas in other processes, see
  // remote_parameter_server.h) go to `inbox`, addressed to the server's home
  // device, rather than into a mailbox. Set before messages flow.
  using ServerInbox =
      std::function<void(int to, const MessageTag& tag, const float* values, int64_t count)>;
  void set_server_inbox(ServerInbox inbox) { server_inbox_ = std::move(inbox); }

 private:
  std::vector<Mailbox*> mailboxes_;
  ServerInbox server_inbox_;
};

}  // namespace pipelab
