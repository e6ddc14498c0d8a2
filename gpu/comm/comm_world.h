// CommWorld: the NCCL side of one CUDA run, shared by MessageRoutes and every
// DeviceGroup.
//
//  - Communicators per GPU set, not per pair of virtual devices or per group:
//    every message link or collective group whose virtual devices sit on the
//    same set of GPUs uses one communicator, so a run creates (and holds the
//    buffers of) as many as it has distinct GPU sets. Each is split
//    (ncclCommSplit) from one world communicator over all the run's GPUs,
//    made on first use with ncclCommInitAll; a split reuses the world's
//    bootstrap instead of building a new one. All of this happens while the
//    executor builds the run, before any NCCL operation (a split must not
//    race one).
//  - The launch lock: every NCCL launch of the run is made under it
//    (message_routes.h says why); lock_for_launch() also surfaces NCCL's
//    asynchronous errors and refuses launches after an abort.
//  - abort(): after a failure, ncclCommAbort on every communicator, so NCCL
//    kernels on healthy GPUs stop waiting for a peer that faulted and the
//    other workers' stream synchronisations return instead of hanging.
//  - Across processes, this rank's communicators with the other ranks
//    (rank_world.h, attached once made) share the launch lock: their
//    launches hold it, their asynchronous errors surface at it, and abort()
//    aborts them under it too, so an abort never frees a communicator while
//    a launch on it is under way.
//
// nccl_gpu_sets() and nccl_communicators_per_gpu() are the host arithmetic of
// the first point (the memory pre-flight counts NCCL's buffers with them).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#ifdef PIPELAB_HAVE_NCCL
#include "gpu/comm/nccl_comm.h"
#endif

namespace pipelab::gpu {

class RankWorld;

#ifdef PIPELAB_HAVE_NCCL
inline constexpr bool kHaveNccl = true;
#else
inline constexpr bool kHaveNccl = false;
#endif

// The GPU sets that need a communicator: for each group of communicating
// virtual devices (a message link's two ends, or a collective group's
// members), the sorted GPUs they run on, when they are at least two and all
// distinct (virtual devices sharing a GPU use device-to-device copies: NCCL
// refuses two ranks on one GPU). Each set once, in ascending order.
std::vector<std::vector<int>> nccl_gpu_sets(const std::vector<std::vector<int>>& device_groups,
                                            const std::vector<int>& gpu_of_device);

// For each of `gpus` GPUs, how many communicators it takes part in: the sets
// containing it, plus the world communicator they are split from (over every
// GPU that is in some set) unless one set is the world already.
std::vector<int> nccl_communicators_per_gpu(const std::vector<std::vector<int>>& sets, int gpus);

class CommWorld {
 public:
  // `gpus`: the GPUs of the run. Makes no NCCL call yet.
  explicit CommWorld(std::vector<int> gpus);
  ~CommWorld();  // destroys every communicator (split ones first), unless aborted
  CommWorld(const CommWorld&) = delete;
  CommWorld& operator=(const CommWorld&) = delete;

  // Holds the run's launch lock. Throws RunStopped once abort() ran (the
  // communicators are gone; the run is failing already) and CudaError when a
  // communicator reports an asynchronous NCCL error.
  std::unique_lock<std::timed_mutex> lock_for_launch();

#ifdef PIPELAB_HAVE_NCCL
  // The communicator over exactly `gpus` (at least two, distinct, any
  // order), its ranks in ascending GPU order: the world when `gpus` are all
  // the run's GPUs, else split from the world on the first request and kept.
  // Call while building the run, before any launch. Throws
  // std::invalid_argument for a GPU twice or one not in the run, CudaError
  // when NCCL fails.
  const NcclGroup& group(std::vector<int> gpus);
#endif
  // How many communicators exist (the world included).
  int communicators() const;
  // This rank's communicators between ranks, which must outlive the
  // launches (or be detached with null); before any worker starts.
  void attach(RankWorld* between_ranks);

  // Aborts every communicator, under the launch lock (so no launch is half
  // made) unless a launch holds it for kAbortLockWait: then it is stuck behind
  // a hung kernel, and aborting is what frees it. Idempotent, thread-safe,
  // never throws.
  static constexpr std::chrono::seconds kAbortLockWait{5};
  void abort() noexcept;
  bool aborted() const;

 private:
  std::vector<int> gpus_;  // sorted
  mutable std::timed_mutex launch_;
  std::atomic<bool> aborted_{false};
  RankWorld* between_ranks_ = nullptr;
#ifdef PIPELAB_HAVE_NCCL
  std::unique_ptr<NcclGroup> world_;                              // made on first group()
  std::map<std::vector<int>, std::unique_ptr<NcclGroup>> split_;  // by sorted GPU set
#endif
};

}  // namespace pipelab::gpu
