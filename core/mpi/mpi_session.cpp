#include "core/mpi/mpi_session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "core/mpi/clock_sync.h"
#include "core/mpi/mpi_call.h"

namespace pipelab::mpi {
namespace {

constexpr int kClockRounds = 20;
// Ranks load their data and build their stages at their own pace before they
// meet: a rank that is not there this long after the first is taken for gone.
constexpr double kStartTimeoutS = 60;

}  // namespace

MpiSession::MpiSession(double silence_limit_s) : silence_limit_s_(silence_limit_s) {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    throw std::runtime_error("MPI_Init_thread failed: is this process started by mpirun?");
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", 0);
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank", 0);
  check(MPI_Comm_size(MPI_COMM_WORLD, &ranks_), "MPI_Comm_size", rank_);
  if (provided < MPI_THREAD_SERIALIZED)
    throw std::runtime_error("rank " + std::to_string(rank_) +
                             ": this MPI cannot be called from a thread other than main "
                             "(MPI_THREAD_SERIALIZED); use an MPI built with thread support");
  // The run's own communicator, so no library's messages mix with ours.
  check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup", rank_);
  check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", rank_);
}

MpiSession::~MpiSession() {
  if (finalized_) return;
  // An error on the way (already reported): the other ranks may be waiting
  // for this one, so the job ends here rather than hangs.
  link_.reset();
  std::cout.flush();
  std::cerr.flush();
  MPI_Abort(MPI_COMM_WORLD, 2);
}

const ProcessShare& MpiSession::join(int devices, int devices_per_rank) {
  share_ = process_share(devices, ranks_, rank_, devices_per_rank);
  // The ranks that share this machine's memory are those of this node.
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type", rank_);
  check(MPI_Comm_rank(node, &share_.local_rank), "MPI_Comm_rank (node)", rank_);
  check(MPI_Comm_size(node, &share_.local_ranks), "MPI_Comm_size (node)", rank_);
  check(MPI_Comm_free(&node), "MPI_Comm_free (node)", rank_);
  link_ = std::make_unique<MpiLink>(comm_, share_, silence_limit_s_);
  share_.make_transport = [link = link_.get()](InProcessTransport& local) {
    return link->wrap(local);
  };
  if (rank_ != 0) share_.reporter = &link_->reports();
  // Called while each rank builds its executor, at its own pace: the start's timeout.
  share_.setup_timeout_s = std::max(kStartTimeoutS, silence_limit_s_);
  share_.exchange = [this](const std::string& text) {
    return all_gather_text(comm_, text, share_.setup_timeout_s, rank_,
                           "the set-up exchange (building the run)");
  };
  return share_;
}

void MpiSession::start(ThreadedExecutor& executor) {
  const double start_timeout = std::max(kStartTimeoutS, silence_limit_s_);
  barrier(comm_, start_timeout, rank_, "the start (loading data, building stages)");
  offsets_ = measure_clock_offsets(comm_, rank_, ranks_, kClockRounds, silence_limit_s_);
  barrier(comm_, silence_limit_s_, rank_, "the start");
  if (rank_ == 0) executor.start();
  barrier(comm_, silence_limit_s_, rank_, "the start");
  if (rank_ != 0) executor.start();
  link_->start(executor, offsets_);
}

std::string MpiSession::finish(const Executor& executor) {
  const std::string local_failure = executor.state() == RunState::Failed ? executor.error() : "";
  const std::string failure = link_->finish(local_failure);
  if (failure.empty()) {
    link_.reset();
    check(MPI_Comm_free(&comm_), "MPI_Comm_free", rank_);
    check(MPI_Finalize(), "MPI_Finalize", rank_);
    finalized_ = true;
  }
  return failure;
}

nlohmann::ordered_json MpiSession::summary() const {
  nlohmann::ordered_json processes;
  processes["ranks"] = ranks_;
  processes["devices_per_rank"] = share_.device_count;
  nlohmann::ordered_json clocks = nlohmann::ordered_json::array();
  for (size_t rank = 0; rank < offsets_.size(); ++rank)
    clocks.push_back({{"rank", rank},
                      {"offset_to_rank0_s", offsets_[rank].offset_s},
                      {"uncertainty_s", offsets_[rank].uncertainty_s}});
  processes["clock_offsets"] = clocks;
  return processes;
}

void MpiSession::abort_job(int exit_code) {
  std::cout.flush();
  std::cerr.flush();
  // Rank 0 writes the run's files before it ends the job; the others give it
  // that time, and end the job themselves only when rank 0 is the one gone.
  if (rank_ != 0) std::this_thread::sleep_for(std::chrono::duration<double>(silence_limit_s_ + 2));
  finalized_ = true;  // nothing to finalize: the job ends
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; in case it does
}

}  // namespace pipelab::mpi
