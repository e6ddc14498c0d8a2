// RankSession: this process's part in a training run spread over processes
// (pipelab-cli train under mpirun). command_train drives it; core/mpi's
// MpiSession implements it, and app/pipelab_cli_main.cpp hands it in through
// CliHooks::join_ranks when the build has MPI. Rank 0 writes the run's
// trace, CSV and summary; the other ranks print only their errors.
#pragma once

#include <nlohmann/json.hpp>

#include "core/runtime/executor.h"
#include "core/runtime/process_share.h"
#include "core/runtime/threaded_executor.h"

namespace pipelab {

class RankSession {
 public:
  // A session destroyed before finish() (an error on the way) ends the whole job.
  virtual ~RankSession() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // This rank's share of a run of `devices` (`devices_per_rank` 0: devices /
  // ranks), with the transport and reporter that tie it to the others.
  // Throws std::invalid_argument when the devices do not divide.
  virtual const ProcessShare& join(int devices, int devices_per_rank) = 0;
  // Measures every rank's clock offset to rank 0, then starts `executor` on
  // every rank, rank 0 first (its clock is the run's), and the traffic
  // between the ranks.
  virtual void start(ThreadedExecutor& executor) = 0;
  // Once the local run is over: waits for every rank. Returns "" when every
  // rank finished, else why the run failed (naming the rank).
  virtual std::string finish(const Executor& executor) = 0;
  // For rank 0's summary: ranks, devices per rank, each rank's clock offset.
  virtual nlohmann::ordered_json summary() const = 0;
  // After a failure, once rank 0 has written its files: ends every process of
  // the job (exit status `exit_code`).
  [[noreturn]] virtual void abort_job(int exit_code) = 0;
};

// How many processes the launcher started (OpenMPI's OMPI_COMM_WORLD_SIZE, or
// PMI_SIZE), or 1 when it was not started by one.
int launched_ranks();

}  // namespace pipelab
