// RankWorld: this rank's NCCL communicators with the other ranks of a CUDA
// run over processes, made as RankCommPlan says (rank_comm_plan.h: which
// groups and links, why one communicator each, why this cannot deadlock).
//
// Set-up, while the executor is built and before any worker starts (every
// rank makes the same calls in the same order, which NCCL's collective
// set-up needs): rank 0's ncclGetUniqueId reaches every rank through the
// process share's exchange (an MPI all-gather with the start's timeout, so a
// rank that failed to build is named, not waited for); every rank calls
// ncclCommInitRank over all ranks, then ncclCommSplit once per communicator
// of the plan (split_color, split_key), keeping those it is in.
//
// Never a hang: those calls block until every rank of the communicator has
// come, so every communicator is non-blocking (ncclConfig_t blocking = 0)
// and each step is polled (setup_wait.h) with the session's start timeout
// and the run's stop flag; on a timeout, a stop or an NCCL error every
// communicator made so far is aborted and the error names this rank and the
// step. Non-blocking communicators may return ncclInProgress from any call,
// so the run's launches are polled the same way (no timeout: the run's
// silence detection stops a run whose peer is gone, and the stop flag ends
// the poll), before the launch lock is released (comm_world.h).
//
// Connections, at set-up: NCCL connects ranks lazily. Point-to-point
// connections (ncclSend/ncclRecv: the links, and the all-to-all, which is
// send/recv pairs in one NCCL group) are made on the first operation with
// each peer, always. A collective algorithm's connections (ring, tree, and
// NVLS or CollNet where the machine has them) are made while the
// communicator is made when NCCL_RUNTIME_CONNECT is 0; by default since NCCL
// 2.22 (NCCL_RUNTIME_CONNECT=1, on GPUs with cuMem) only on the first
// collective that picks that algorithm, which depends on the size (a small
// all-reduce may take the tree, a large one the ring). A first use waits for
// the peers. During the run that wait would come inside a launch, which
// holds its process's launch lock, and a wait there for a peer whose own
// launch waits for that peer's lock could stall both processes. So:
//  - before the world is made, NCCL_RUNTIME_CONNECT is set to 0 unless the
//    user set it (NCCL reads it once per process, at its first communicator;
//    no worker thread runs yet): every communicator connects its algorithms
//    while it is made, which is polled with the start timeout like the rest;
//  - then the warm-up (rank_comm_plan.h: rank_warm_ups, and why it cannot
//    deadlock): one float over each link, and one tiny collective of each
//    kind each group runs, which connects the all-to-all to every peer and
//    sends something through every collective, each step polled with the
//    start timeout, so a rank that is gone is named at set-up.
// A user who sets NCCL_RUNTIME_CONNECT=1 gets only the algorithms the
// warm-up's tiny collectives pick connected at set-up; a larger
// collective's may still connect during the run.
//
// Collectives: this rank's member issues its part on its own stream. NCCL
// works in place for all-reduce, all-gather and reduce-scatter (the slice
// layout of collective_steps.h: member i's slice at offset i); all-to-all
// needs a separate receive buffer. Point-to-point: send and recv on the
// link's own communicator, each on a stream of that link alone.
//
// Compiled, never run: NCCL refuses two ranks on one GPU, and the machines
// this was written on have one GPU at most.
#pragma once

#ifdef PIPELAB_HAVE_NCCL

#include <cuda_runtime.h>
#include <nccl.h>

#include <functional>
#include <string>
#include <vector>

#include "gpu/comm/rank_comm_plan.h"
#include "gpu/comm/setup_wait.h"
#include "gpu/memory/device_tensor.h"

namespace pipelab::gpu {

class RankWorld {
 public:
  using Exchange = std::function<std::vector<std::string>(const std::string&)>;

  // Makes the communicators of `plan` on `gpu` for process `rank` of `ranks`
  // (none when the plan needs none), each step waited for as `setup` says.
  // Throws CudaError when NCCL fails, std::runtime_error naming the step on
  // a timeout or a stop (every communicator aborted then), and what
  // `exchange` throws when a rank does not come.
  RankWorld(const RankCommPlan& plan, int rank, int ranks, int gpu, const Exchange& exchange,
            const SetupWait& setup);
  // Finalizes and destroys the communicators (split ones first), unless
  // aborted; aborts them when finalizing does not end within the set-up's
  // timeout.
  ~RankWorld();
  RankWorld(const RankWorld&) = delete;
  RankWorld& operator=(const RankWorld&) = delete;

  int communicators() const;  // this rank's, the world included
  // Throws CudaError when a communicator reports an asynchronous error.
  void check_async_errors() const;
  // ncclCommAbort on every communicator, so no NCCL kernel waits forever for
  // a rank that failed. Idempotent; not thread-safe: the run calls it through
  // CommWorld::abort, under the launch lock its launches hold.
  void abort() noexcept;

  // This rank's part of communicator `index` (it must be in it), in place.
  void all_reduce_sum(int index, DeviceTensor& tensor, cudaStream_t stream) const;
  void all_gather(int index, DeviceTensor& tensor, cudaStream_t stream) const;
  void reduce_scatter(int index, DeviceTensor& tensor, cudaStream_t stream) const;
  // `received` (as large as `tensor`) gets slice j from member j.
  void all_to_all(int index, DeviceTensor& tensor, DeviceTensor& received,
                  cudaStream_t stream) const;
  // A link's communicator: its sender is NCCL rank 0, its receiver rank 1.
  void send(int index, const DeviceTensor& tensor, cudaStream_t stream) const;
  void recv(int index, DeviceTensor& tensor, cudaStream_t stream) const;

 private:
  // Waits, as `wait` says, until `comm` has finished the call that returned
  // `issued`; throws CudaError naming `step` when it failed.
  void complete(ncclResult_t issued, ncclComm_t comm, const std::string& step,
                const SetupWait& wait) const;
  // Issues this rank's part of `collective` on communicator `index` over
  // the `elements` floats at `whole` (in place; the all-to-all receives into
  // `received`), on `stream`, and waits as `wait` says for NCCL to take it.
  void issue(GroupCollective collective, int index, float* whole, float* received, size_t elements,
             cudaStream_t stream, const SetupWait& wait, const std::string& step) const;
  // The warm-up (above): every step of rank_warm_ups, then their kernels.
  void warm_up(const SetupWait& setup);
  ncclComm_t member(int index) const;  // throws std::logic_error when not a member
  int nccl_rank(int index) const;
  size_t slice(int index, size_t elements) const;  // per-member length

  const RankCommPlan& plan_;
  const int rank_;
  const int gpu_;
  SetupWait launch_wait_;    // the set-up's, without its timeout
  SetupWait finalize_wait_;  // the set-up's, without the stop flag
  ncclComm_t world_ = nullptr;
  std::vector<ncclComm_t> split_;  // per communicator of the plan; null where not a member
  bool aborted_ = false;
};

}  // namespace pipelab::gpu

#endif  // PIPELAB_HAVE_NCCL
