// NCCL communicators for a group of GPUs in this process (only when built with
// NCCL: PIPELAB_HAVE_NCCL). Rank i drives GPU gpus[i]; NCCL needs distinct GPUs
// (two ranks on one GPU: use same_gpu_comm.h instead). A group is created
// whole (ncclCommInitAll) or split from a larger one (ncclCommSplit, which
// reuses the parent's bootstrap instead of building a new one; comm_world.h).
//
// The per-rank calls are made by the host thread that drives that rank, each
// on its own stream; NCCL matches them across ranks on the GPUs. Sends and
// receives that a rank issues together go through send_recv, inside one NCCL
// group, so two neighbours that both send and receive cannot deadlock.
#pragma once

#ifdef PIPELAB_HAVE_NCCL

#include <cuda_runtime.h>
#include <nccl.h>

#include <span>
#include <vector>

#include "gpu/memory/device_tensor.h"

namespace pipelab::gpu {

// One point-to-point transfer of a rank: send `tensor` to `peer`, or receive
// into it from `peer`.
struct NcclTransfer {
  enum class Kind { Send, Recv };
  Kind kind = Kind::Send;
  DeviceTensor* tensor = nullptr;
  int peer = 0;  // the other rank
};

class NcclGroup {
 public:
  // Creates one communicator per GPU with ncclCommInitAll. Throws
  // std::invalid_argument for an empty list or a GPU listed twice, CudaError
  // when NCCL fails.
  explicit NcclGroup(std::vector<int> gpus);
  // The ranks of `parent` on `gpus` (in that order), split from it:
  // ncclCommSplit is a collective over every rank of `parent`, so this thread
  // issues it for all of them in one NCCL group (the ranks not in `gpus` with
  // NCCL_SPLIT_NOCOLOR). `parent` must have no NCCL operation outstanding.
  // Throws std::invalid_argument when `gpus` is empty, lists a GPU twice or
  // one `parent` does not have.
  NcclGroup(const NcclGroup& parent, std::vector<int> gpus);
  // Destroys the communicators (unless aborted), after the work queued on them.
  ~NcclGroup();
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  int size() const { return static_cast<int>(gpus_.size()); }
  int gpu(int rank) const { return gpus_[rank]; }
  ncclComm_t comm(int rank) const { return comms_[rank]; }
  // The rank on `gpu`, or -1 when the group has none there.
  int rank_of(int gpu) const;

  // Aborts every rank's communicator (ncclCommAbort): NCCL kernels still
  // waiting for a peer give up, so the streams can be synchronised after a
  // fault. The group is unusable afterwards. Idempotent; no other thread may
  // use the group meanwhile (CommWorld holds the launch lock).
  void abort() noexcept;
  bool aborted() const { return aborted_; }
  // Throws CudaError naming the first rank whose communicator has an
  // asynchronous error (ncclCommGetAsyncError): after one, nothing queued on
  // it can be trusted to finish, and it must be aborted.
  void check_async_errors() const;

  // Rank `rank`'s part of an in-place sum over all ranks.
  void all_reduce_sum(int rank, DeviceTensor& tensor, cudaStream_t stream) const;
  void send(int rank, const DeviceTensor& tensor, int peer, cudaStream_t stream) const;
  void recv(int rank, DeviceTensor& tensor, int peer, cudaStream_t stream) const;
  // Several transfers of one rank as one NCCL group.
  void send_recv(int rank, std::span<const NcclTransfer> transfers, cudaStream_t stream) const;
  // From a single thread: one message, both sides at once (one NCCL group):
  // rank `from` sends `source` on `from_stream`, rank `to` receives it into
  // `target` (same size) on `to_stream`. Issuing both halves together is what
  // keeps point-to-point transfers from deadlocking (see message_routes.h).
  void transfer(int from, const DeviceTensor& source, cudaStream_t from_stream, int to,
                DeviceTensor& target, cudaStream_t to_stream) const;

  // From a single thread: the all-reduce of every rank at once (one NCCL group),
  // tensors[i] and streams[i] being rank i's. For tests and single-threaded drivers.
  void all_reduce_sum_all(std::span<DeviceTensor* const> tensors,
                          std::span<const cudaStream_t> streams) const;
  // The same for the other group collectives (device_group.h), in place, the
  // tensors cut into size() equal slices as collective_steps.h lays them out:
  //  - all-to-all: rank i's slice j goes to slice i of received[j] (NCCL
  //    cannot receive into a buffer it is sending from, so the caller copies
  //    received[i]'s slices other than i back into tensors[i]);
  //  - all-gather: rank i's slice i goes to every rank's slice i;
  //  - reduce-scatter: rank i's slice i becomes the sum of every rank's
  //    slice i (the other slices keep their values).
  void all_to_all_all(std::span<DeviceTensor* const> tensors,
                      std::span<DeviceTensor* const> received,
                      std::span<const cudaStream_t> streams) const;
  void all_gather_all(std::span<DeviceTensor* const> tensors,
                      std::span<const cudaStream_t> streams) const;
  void reduce_scatter_all(std::span<DeviceTensor* const> tensors,
                          std::span<const cudaStream_t> streams) const;

 private:
  // Throws std::invalid_argument unless there is one tensor and one stream
  // per rank, each tensor cut evenly into size() slices when `sliced`;
  // returns the slice's length.
  size_t check_every_rank(const char* collective, std::span<DeviceTensor* const> tensors,
                          std::span<const cudaStream_t> streams, bool sliced) const;

  std::vector<int> gpus_;
  std::vector<ncclComm_t> comms_;
  bool aborted_ = false;
};

}  // namespace pipelab::gpu

#endif  // PIPELAB_HAVE_NCCL
