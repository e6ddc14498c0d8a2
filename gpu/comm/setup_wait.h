// SetupWait: how RankWorld (rank_world.h) waits for NCCL's non-blocking
// calls between ranks. ncclCommInitRank and ncclCommSplit block until every
// rank of the communicator has come, so a rank that died or never got there
// would hang the others; with a non-blocking communicator (ncclConfig_t
// blocking = 0, NCCL 2.14 and later; ncclCommSplit since 2.18) they return
// ncclInProgress at once and RankWorld polls the communicator's state
// (ncclCommGetAsyncError) through here: until it is ready, the run is
// stopping, or the set-up's deadline passes. Host code with no NCCL call,
// so the CPU tests check its decisions.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace pipelab::gpu {

struct SetupWait {
  int rank = 0;  // this process's rank, for the messages
  // How long one set-up step may take (the session's start timeout); none:
  // no deadline (launches during the run, which the run's own silence
  // detection stops).
  std::optional<std::chrono::duration<double>> timeout;
  std::function<bool()> stopping;  // the run's stop flag; null: never
  std::chrono::microseconds interval{200};

  // Calls `ready` (which throws when NCCL reports an error) until it returns
  // true. Throws std::runtime_error "rank R: <step> did not finish within
  // T s: ..." after the timeout, and RunStopped once `stopping` says so.
  void until_ready(const std::function<bool()>& ready, const std::string& step) const;
};

}  // namespace pipelab::gpu
