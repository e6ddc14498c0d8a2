// NCCL communicators for a group of GPUs in this process (only when built with
// NCCL: PIPELAB_HAVE_NCCL). Rank i drives GPU gpus[i]; NCCL needs distinct GPUs
// (two ranks on one GPU: use same_gpu_comm.h instead).
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
  ~NcclGroup();
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  int size() const { return static_cast<int>(gpus_.size()); }
  int gpu(int rank) const { return gpus_[rank]; }
  ncclComm_t comm(int rank) const { return comms_[rank]; }

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

 private:
  std::vector<int> gpus_;
  std::vector<ncclComm_t> comms_;
};

}  // namespace pipelab::gpu

#endif  // PIPELAB_HAVE_NCCL
