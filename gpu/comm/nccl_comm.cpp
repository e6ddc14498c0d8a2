#ifdef PIPELAB_HAVE_NCCL

#include "gpu/comm/nccl_comm.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"

namespace pipelab::gpu {
namespace {

size_t element_count(const DeviceTensor& tensor) { return static_cast<size_t>(tensor.size()); }

void check_distinct(const std::vector<int>& gpus) {
  if (gpus.empty()) throw std::invalid_argument("an NCCL group needs at least one GPU");
  std::vector<int> sorted = gpus;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw std::invalid_argument(
        "NCCL cannot put two ranks on one GPU; use the same-GPU fallback (same_gpu_comm.h) for "
        "virtual devices that share a GPU");
}

}  // namespace

NcclGroup::NcclGroup(std::vector<int> gpus) : gpus_(std::move(gpus)) {
  check_distinct(gpus_);
  comms_.resize(gpus_.size());
  PIPELAB_NCCL_CHECK(ncclCommInitAll(comms_.data(), size(), gpus_.data()));
}

NcclGroup::NcclGroup(const NcclGroup& parent, std::vector<int> gpus) : gpus_(std::move(gpus)) {
  check_distinct(gpus_);
  for (int gpu : gpus_)
    if (parent.rank_of(gpu) < 0)
      throw std::invalid_argument("GPU " + std::to_string(gpu) +
                                  " is not in the NCCL group being split");
  std::vector<ncclComm_t> split(static_cast<size_t>(parent.size()), nullptr);
  PIPELAB_NCCL_CHECK(ncclGroupStart());
  for (int rank = 0; rank < parent.size(); ++rank) {
    const auto position = std::find(gpus_.begin(), gpus_.end(), parent.gpu(rank));
    const bool member = position != gpus_.end();
    // Keys order the new ranks as `gpus_` lists them.
    PIPELAB_NCCL_CHECK(ncclCommSplit(parent.comm(rank), member ? 0 : NCCL_SPLIT_NOCOLOR,
                                     static_cast<int>(position - gpus_.begin()), &split[rank],
                                     nullptr));
  }
  PIPELAB_NCCL_CHECK(ncclGroupEnd());
  for (int gpu : gpus_) comms_.push_back(split[static_cast<size_t>(parent.rank_of(gpu))]);
}

NcclGroup::~NcclGroup() {
  if (aborted_) return;  // ncclCommAbort freed them
  for (size_t i = 0; i < comms_.size(); ++i) {
    DeviceGuard guard(gpus_[i], DeviceGuard::NoThrow{});
    PIPELAB_NCCL_WARN(ncclCommDestroy(comms_[i]));
  }
}

int NcclGroup::rank_of(int gpu) const {
  const auto found = std::find(gpus_.begin(), gpus_.end(), gpu);
  return found == gpus_.end() ? -1 : static_cast<int>(found - gpus_.begin());
}

void NcclGroup::abort() noexcept {
  if (aborted_) return;
  aborted_ = true;
  // Every rank must be aborted; each call returns once its kernels have quit.
  for (size_t i = 0; i < comms_.size(); ++i) {
    DeviceGuard guard(gpus_[i], DeviceGuard::NoThrow{});
    PIPELAB_NCCL_WARN(ncclCommAbort(comms_[i]));
  }
}

void NcclGroup::check_async_errors() const {
  if (aborted_) return;
  for (size_t i = 0; i < comms_.size(); ++i) {
    ncclResult_t error = ncclSuccess;
    PIPELAB_NCCL_CHECK(ncclCommGetAsyncError(comms_[i], &error));
    if (error != ncclSuccess && error != ncclInProgress)
      throw CudaError("NCCL reports an asynchronous error on GPU " + std::to_string(gpus_[i]) +
                      ": " + ncclGetErrorString(error) + " (" + ncclGetLastError(comms_[i]) + ")");
  }
}

void NcclGroup::all_reduce_sum(int rank, DeviceTensor& tensor, cudaStream_t stream) const {
  assert(rank >= 0 && rank < size() && tensor.device() == gpus_[rank]);
  DeviceGuard guard(gpus_[rank]);
  PIPELAB_NCCL_CHECK(ncclAllReduce(tensor.data(), tensor.data(), element_count(tensor), ncclFloat32,
                                   ncclSum, comms_[rank], stream));
}

void NcclGroup::send(int rank, const DeviceTensor& tensor, int peer, cudaStream_t stream) const {
  const NcclTransfer transfer{NcclTransfer::Kind::Send, const_cast<DeviceTensor*>(&tensor), peer};
  send_recv(rank, std::span<const NcclTransfer>(&transfer, 1), stream);
}

void NcclGroup::recv(int rank, DeviceTensor& tensor, int peer, cudaStream_t stream) const {
  const NcclTransfer transfer{NcclTransfer::Kind::Recv, &tensor, peer};
  send_recv(rank, std::span<const NcclTransfer>(&transfer, 1), stream);
}

void NcclGroup::send_recv(int rank, std::span<const NcclTransfer> transfers,
                          cudaStream_t stream) const {
  assert(rank >= 0 && rank < size());
  DeviceGuard guard(gpus_[rank]);
  PIPELAB_NCCL_CHECK(ncclGroupStart());
  for (const NcclTransfer& transfer : transfers) {
    assert(transfer.peer >= 0 && transfer.peer < size() && transfer.peer != rank);
    if (transfer.kind == NcclTransfer::Kind::Send)
      PIPELAB_NCCL_CHECK(ncclSend(transfer.tensor->data(), element_count(*transfer.tensor),
                                  ncclFloat32, transfer.peer, comms_[rank], stream));
    else
      PIPELAB_NCCL_CHECK(ncclRecv(transfer.tensor->data(), element_count(*transfer.tensor),
                                  ncclFloat32, transfer.peer, comms_[rank], stream));
  }
  PIPELAB_NCCL_CHECK(ncclGroupEnd());
}

void NcclGroup::transfer(int from, const DeviceTensor& source, cudaStream_t from_stream, int to,
                         DeviceTensor& target, cudaStream_t to_stream) const {
  assert(from >= 0 && from < size() && to >= 0 && to < size() && from != to);
  assert(source.size() == target.size());
  PIPELAB_NCCL_CHECK(ncclGroupStart());
  PIPELAB_NCCL_CHECK(ncclSend(source.data(), element_count(source), ncclFloat32, to, comms_[from],
                              from_stream));
  PIPELAB_NCCL_CHECK(
      ncclRecv(target.data(), element_count(target), ncclFloat32, from, comms_[to], to_stream));
  PIPELAB_NCCL_CHECK(ncclGroupEnd());
}

size_t NcclGroup::check_every_rank(const char* collective, std::span<DeviceTensor* const> tensors,
                                   std::span<const cudaStream_t> streams, bool sliced) const {
  if (static_cast<int>(tensors.size()) != size() || streams.size() != tensors.size())
    throw std::invalid_argument(
        std::string("an ") + collective + " over an NCCL group of " + std::to_string(size()) +
        " ranks needs one tensor and one stream per rank, got " + std::to_string(tensors.size()) +
        " and " + std::to_string(streams.size()));
  const size_t values = element_count(*tensors[0]);
  for (DeviceTensor* tensor : tensors)
    if (element_count(*tensor) != values || (sliced && values % tensors.size() != 0))
      throw std::invalid_argument(std::string("an ") + collective + " over " +
                                  std::to_string(size()) +
                                  " ranks needs tensors of one size, a multiple of the ranks");
  return sliced ? values / tensors.size() : values;
}

void NcclGroup::all_reduce_sum_all(std::span<DeviceTensor* const> tensors,
                                   std::span<const cudaStream_t> streams) const {
  check_every_rank("all-reduce", tensors, streams, false);
  PIPELAB_NCCL_CHECK(ncclGroupStart());
  for (int rank = 0; rank < size(); ++rank) {
    DeviceTensor& tensor = *tensors[rank];
    PIPELAB_NCCL_CHECK(ncclAllReduce(tensor.data(), tensor.data(), element_count(tensor),
                                     ncclFloat32, ncclSum, comms_[rank], streams[rank]));
  }
  PIPELAB_NCCL_CHECK(ncclGroupEnd());
}

void NcclGroup::all_to_all_all(std::span<DeviceTensor* const> tensors,
                               std::span<DeviceTensor* const> received,
                               std::span<const cudaStream_t> streams) const {
  const size_t slice = check_every_rank("all-to-all", tensors, streams, true);
  check_every_rank("all-to-all", received, streams, true);
  // Every send and receive of every rank in one group: NCCL pairs them up
  // without deadlock whatever the order.
  PIPELAB_NCCL_CHECK(ncclGroupStart());
  for (int rank = 0; rank < size(); ++rank)
    for (int peer = 0; peer < size(); ++peer) {
      if (peer == rank) continue;
      PIPELAB_NCCL_CHECK(ncclSend(tensors[rank]->data() + peer * slice, slice, ncclFloat32, peer,
                                  comms_[rank], streams[rank]));
      PIPELAB_NCCL_CHECK(ncclRecv(received[rank]->data() + peer * slice, slice, ncclFloat32, peer,
                                  comms_[rank], streams[rank]));
    }
  PIPELAB_NCCL_CHECK(ncclGroupEnd());
}

void NcclGroup::all_gather_all(std::span<DeviceTensor* const> tensors,
                               std::span<const cudaStream_t> streams) const {
  const size_t slice = check_every_rank("all-gather", tensors, streams, true);
  PIPELAB_NCCL_CHECK(ncclGroupStart());
  for (int rank = 0; rank < size(); ++rank) {
    float* whole = tensors[rank]->data();
    // In place: the rank's own slice is its send buffer.
    PIPELAB_NCCL_CHECK(ncclAllGather(whole + rank * slice, whole, slice, ncclFloat32, comms_[rank],
                                     streams[rank]));
  }
  PIPELAB_NCCL_CHECK(ncclGroupEnd());
}

void NcclGroup::reduce_scatter_all(std::span<DeviceTensor* const> tensors,
                                   std::span<const cudaStream_t> streams) const {
  const size_t slice = check_every_rank("reduce-scatter", tensors, streams, true);
  PIPELAB_NCCL_CHECK(ncclGroupStart());
  for (int rank = 0; rank < size(); ++rank) {
    float* whole = tensors[rank]->data();
    // In place: the result lands in the rank's own slice.
    PIPELAB_NCCL_CHECK(ncclReduceScatter(whole, whole + rank * slice, slice, ncclFloat32, ncclSum,
                                         comms_[rank], streams[rank]));
  }
  PIPELAB_NCCL_CHECK(ncclGroupEnd());
}

}  // namespace pipelab::gpu

#endif  // PIPELAB_HAVE_NCCL
