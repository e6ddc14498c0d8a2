// MpiSession: the RankSession (core/runtime/rank_session.h) of a process that
// mpirun started: initialises MPI (errors returned, not fatal), lays out the
// ranks' devices, measures the clocks, owns the rank's MpiLink and ends MPI.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "core/runtime/rank_session.h"
#include "core/mpi/mpi_link.h"

namespace pipelab::mpi {

class MpiSession final : public RankSession {
 public:
  // MPI_Init_thread with MPI_THREAD_SERIALIZED. Throws std::runtime_error
  // when MPI cannot start or cannot give that much.
  explicit MpiSession(double silence_limit_s);
  ~MpiSession() override;

  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }
  const ProcessShare& join(int devices, int devices_per_rank) override;
  void start(ThreadedExecutor& executor) override;
  std::string finish(const Executor& executor) override;
  nlohmann::ordered_json summary() const override;
  [[noreturn]] void abort_job(int exit_code) override;

 private:
  const double silence_limit_s_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int ranks_ = 1;
  ProcessShare share_;
  std::unique_ptr<MpiLink> link_;
  std::vector<ClockOffset> offsets_;  // rank 0
  bool finalized_ = false;
};

}  // namespace pipelab::mpi
