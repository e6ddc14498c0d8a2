// ProcessShare: the part of a run one process runs when the run is spread
// over several (pipelab-cli train under mpirun, core/mpi). Rank r hosts the
// contiguous block of virtual devices r K .. r K + K - 1 (K devices per
// rank), so with the device numbering of core/plan/device_layout.h a rank
// holds whole tensor-parallel groups first, then pipeline stages, then
// replicas. Every rank lowers the same schedule and runs its own devices' op
// lists; messages for devices elsewhere leave through the transport the share
// wraps around the in-process one. A one-process run has no share
// (ExecutorOptions::process is null).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/run_reporter.h"
#include "core/comm/transport.h"

namespace pipelab {

struct ProcessShare {
  int rank = 0;
  int ranks = 1;
  int first_device = 0;
  int device_count = 1;  // hosts first_device .. first_device + device_count - 1
  // This rank among the ranks on its machine (0 .. local_ranks - 1): the
  // CUDA backend takes GPU local_rank modulo the GPUs it sees.
  int local_rank = 0;
  int local_ranks = 1;

  // Wraps the in-process transport so that messages for other ranks' devices
  // leave this process (and theirs arrive). Null: every device is here.
  std::function<std::unique_ptr<Transport>(InProcessTransport&)> make_transport;
  // Set-up exchange while the executor is built, before start() (the CUDA
  // backend's NCCL bootstrap, rank_comm_plan.h): every rank calls it as many
  // times, in the same order, with its own `text`; it returns every rank's,
  // by rank. Throws std::runtime_error naming the wait when a rank does not
  // come in time (one that failed to build, or died). Null: not available.
  std::function<std::vector<std::string>(const std::string& text)> exchange;
  // How long one step of the set-up may wait for the other ranks (the
  // exchange's and the CUDA backend's NCCL set-up's timeout, in seconds).
  double setup_timeout_s = 60;
  // Where this process's workers report: null on rank 0, whose recorder makes
  // the run's stream; the other ranks hand their reports on to it.
  RunReporter* reporter = nullptr;

  bool hosts(int device) const {
    return device >= first_device && device < first_device + device_count;
  }
};

// Rank `rank` of `ranks` hosting `devices_per_rank` of a run's `devices`
// (0: devices / ranks). Throws std::invalid_argument, saying how to fix it,
// when the ranks do not host every device exactly once.
ProcessShare process_share(int devices, int ranks, int rank, int devices_per_rank);

}  // namespace pipelab
