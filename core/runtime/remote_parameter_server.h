// Async data parallelism over processes (pipelab-cli train under mpirun).
// Each stage shard's ParameterServer lives on the rank that runs the shard's
// replica 0 (its home device); a replica on another rank reaches it through
// the run's transport, as messages addressed to the home device:
//
//   Push  the gradients as one row (ParameterServerPush, step);
//   Pull  a request naming the version (ParameterServerPull, no values),
//         answered once that version exists with the weights as one row
//         (ParameterServerWeights) into the replica's own mailbox, where the
//         pull waits for it as a receive does (a stop or a failed rank ends
//         the wait).
//
// On the home rank the transport hands both requests to
// serve_parameter_server_request on the thread that delivers them (the MPI
// link's), which never waits: a push is stored (and applies the steps it
// completes), a pull of a version not made yet is answered by the push that
// makes it. Versions, staleness and the replica-order sums are the server's
// own, so a run over processes trains bit for bit as one process does.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/comm/channel.h"
#include "core/runtime/parameter_server.h"
#include "core/comm/transport.h"

namespace pipelab {

// The stand-in for stage `stage`'s server on a rank that does not hold it.
class RemoteParameterServer final : public WeightServer {
 public:
  // `mailboxes` by device (those of this rank's devices set).
  RemoteParameterServer(int home_device, int stage, Transport& transport,
                        const std::vector<std::unique_ptr<Mailbox>>& mailboxes)
      : home_device_(home_device), stage_(stage), transport_(transport), mailboxes_(mailboxes) {}

  void push(int step, int replica, int device, const std::vector<Parameter>& gradients) override;
  void pull(int version, int replica, int device, const std::vector<Parameter>& weights) override;

 private:
  const int home_device_;
  const int stage_;
  Transport& transport_;
  const std::vector<std::unique_ptr<Mailbox>>& mailboxes_;
};

// On the home rank: `server` (of stage tag.stage, on device `home_device`)
// serves the request `tag` of replica `replica`, whose values are `count`
// floats; the answer to a pull leaves through `transport`. Throws
// std::runtime_error on a request that does not fit the server.
void serve_parameter_server_request(ParameterServer& server, int home_device, int replica,
                                    const MessageTag& tag, const float* values, int64_t count,
                                    Transport& transport);

}  // namespace pipelab
