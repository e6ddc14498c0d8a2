#ifdef PIPELAB_HAVE_NCCL

#include "gpu/comm/rank_world.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "core/comm/run_control.h"
#include "gpu/device/cuda_check.h"
#include "gpu/device/cuda_handles.h"
#include "gpu/device/device_guard.h"

namespace pipelab::gpu {
namespace {

static_assert(kNoColor == NCCL_SPLIT_NOCOLOR, "rank_comm_plan.h's kNoColor is NCCL's");

size_t element_count(const DeviceTensor& tensor) { return static_cast<size_t>(tensor.size()); }

// NCCL's own words for a communicator's last error, when it has some.
std::string last_error(ncclComm_t comm) {
  const char* text = comm ? ncclGetLastError(comm) : nullptr;
  return text && *text ? std::string(" (") + text + ")" : std::string();
}

// Calls on this communicator return at once (ncclInProgress) instead of
// blocking until every rank has come (setup_wait.h).
ncclConfig_t non_blocking_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

}  // namespace

RankWorld::RankWorld(const RankCommPlan& plan, int rank, int ranks, int gpu,
                     const Exchange& exchange, const SetupWait& setup)
    : plan_(plan), rank_(rank), gpu_(gpu), launch_wait_(setup), finalize_wait_(setup) {
  launch_wait_.timeout.reset();  // during the run: the run's silence detection stops it
  finalize_wait_.stopping = nullptr;  // a run ends stopped: finalizing comes after
  split_.assign(plan.communicators.size(), nullptr);
  if (!plan.needs_world()) return;
  // Connect every collective algorithm while the communicators are made
  // (rank_world.h), unless the user chose otherwise. Before NCCL's first
  // call here, so that no rank reads another value first (NCCL applies
  // /etc/nccl.conf without overriding the environment, and every rank must
  // agree).
  if (setenv("NCCL_RUNTIME_CONNECT", "0", /*overwrite=*/0) != 0)
    throw std::runtime_error("rank " + std::to_string(rank) +
                             ": could not set NCCL_RUNTIME_CONNECT for NCCL's set-up");
  ncclUniqueId id{};
  if (rank == 0) PIPELAB_NCCL_CHECK(ncclGetUniqueId(&id));
  const std::string mine(reinterpret_cast<const char*>(&id), rank == 0 ? sizeof(id) : 0);
  const std::vector<std::string> ids = exchange(mine);
  if (ids.empty() || ids[0].size() != sizeof(id))
    throw std::runtime_error("rank " + std::to_string(rank) +
                             ": NCCL's unique id did not come from rank 0");
  std::memcpy(&id, ids[0].data(), sizeof(id));
  DeviceGuard guard(gpu_);
  // Whatever fails or times out, no communicator is left waiting for a rank
  // that is not coming: abort them all, then say why.
  try {
    ncclConfig_t config = non_blocking_config();
    // Issued before complete() reads world_: in one call's arguments the
    // compiler may read world_ first, while it is still null.
    const ncclResult_t issued = ncclCommInitRankConfig(&world_, ranks, id, rank, &config);
    complete(issued, world_,
             "NCCL's set-up between ranks (ncclCommInitRank over " + std::to_string(ranks) +
                 " ranks)",
             setup);
    for (size_t index = 0; index < split_.size(); ++index) {
      const int i = static_cast<int>(index);
      const std::string step = "NCCL's set-up between ranks (ncclCommSplit for communicator " +
                               std::to_string(i) + " of " + std::to_string(split_.size()) + ")";
      ncclConfig_t split_config = non_blocking_config();
      // The parent stays in progress until the split is done, then the child
      // (null where this rank is not in it) finishes its own set-up.
      complete(ncclCommSplit(world_, split_color(plan, i, rank), split_key(plan, i, rank),
                             &split_[index], &split_config),
               world_, step, setup);
      if (split_[index]) complete(ncclSuccess, split_[index], step, setup);
    }
    warm_up(setup);
  } catch (const RunStopped&) {
    abort();
    throw std::runtime_error("rank " + std::to_string(rank) +
                             ": the run was stopped during NCCL's set-up between ranks");
  } catch (...) {
    abort();
    throw;
  }
}

RankWorld::~RankWorld() {
  if (aborted_) return;  // ncclCommAbort freed them
  DeviceGuard guard(gpu_, DeviceGuard::NoThrow{});
  std::vector<ncclComm_t> comms;  // split ones first
  for (ncclComm_t comm : split_)
    if (comm) comms.push_back(comm);
  if (world_) comms.push_back(world_);
  // A non-blocking communicator is finalized (until every rank is done with
  // it) before it is destroyed; one that is not finished within the set-up's
  // timeout leaves them aborted instead.
  try {
    for (ncclComm_t comm : comms)
      complete(ncclCommFinalize(comm), comm, "NCCL's finalize between ranks", finalize_wait_);
  } catch (const std::exception& error) {
    warn_cuda_error("ncclCommFinalize", error.what(), __FILE__, __LINE__);
    abort();
    return;
  }
  for (ncclComm_t comm : comms) PIPELAB_NCCL_WARN(ncclCommDestroy(comm));
}

int RankWorld::communicators() const {
  int count = world_ ? 1 : 0;
  for (ncclComm_t comm : split_) count += comm != nullptr;
  return count;
}

void RankWorld::check_async_errors() const {
  if (aborted_) return;
  auto check = [&](ncclComm_t comm) {
    if (!comm) return;
    ncclResult_t error = ncclSuccess;
    PIPELAB_NCCL_CHECK(ncclCommGetAsyncError(comm, &error));
    if (error != ncclSuccess && error != ncclInProgress)
      throw CudaError("NCCL reports an asynchronous error between ranks (rank " +
                      std::to_string(rank_) + "): " + ncclGetErrorString(error) + " (" +
                      ncclGetLastError(comm) + ")");
  };
  for (ncclComm_t comm : split_) check(comm);
  check(world_);
}

void RankWorld::abort() noexcept {
  if (aborted_) return;
  aborted_ = true;
  DeviceGuard guard(gpu_, DeviceGuard::NoThrow{});
  for (ncclComm_t comm : split_)
    if (comm) PIPELAB_NCCL_WARN(ncclCommAbort(comm));
  if (world_) PIPELAB_NCCL_WARN(ncclCommAbort(world_));
}

void RankWorld::complete(ncclResult_t issued, ncclComm_t comm, const std::string& step,
                         const SetupWait& wait) const {
  if (issued != ncclSuccess && issued != ncclInProgress)
    throw CudaError("rank " + std::to_string(rank_) + ": " + step + " failed: " +
                    ncclGetErrorString(issued) + last_error(comm));
  wait.until_ready(
      [&] {
        ncclResult_t state = ncclSuccess;
        PIPELAB_NCCL_CHECK(ncclCommGetAsyncError(comm, &state));
        if (state == ncclInProgress) return false;
        if (state != ncclSuccess)
          throw CudaError("rank " + std::to_string(rank_) + ": " + step + " failed: " +
                          ncclGetErrorString(state) + last_error(comm));
        return true;
      },
      step);
}

void RankWorld::warm_up(const SetupWait& setup) {
  size_t most_members = 2;
  for (const RankCommunicator& communicator : plan_.communicators)
    most_members = std::max(most_members, communicator.ranks.size());
  CudaStream stream(gpu_);
  // One float per member to send from and one to receive into, zeros.
  float* values = nullptr;
  float* received = nullptr;
  const size_t bytes = most_members * sizeof(float);
  PIPELAB_CUDA_CHECK(cudaMalloc(&values, bytes));
  PIPELAB_CUDA_CHECK(cudaMalloc(&received, bytes));
  PIPELAB_CUDA_CHECK(cudaMemsetAsync(values, 0, bytes, stream.get()));
  PIPELAB_CUDA_CHECK(cudaMemsetAsync(received, 0, bytes, stream.get()));
  for (const RankWarmUp& step : rank_warm_ups(plan_, rank_)) {
    const std::string name = "NCCL's set-up between ranks (" + describe_warm_up(plan_, step) + ")";
    const ncclComm_t comm = member(step.communicator);
    const size_t members = plan_.communicators[static_cast<size_t>(step.communicator)].ranks.size();
    switch (step.kind) {
      case RankWarmUp::Kind::Send:
        complete(ncclSend(values, 1, ncclFloat32, 1, comm, stream.get()), comm, name, setup);
        break;
      case RankWarmUp::Kind::Receive:
        complete(ncclRecv(received, 1, ncclFloat32, 0, comm, stream.get()), comm, name, setup);
        break;
      case RankWarmUp::Kind::Collective:
        issue(step.collective, step.communicator, values, received, members, stream.get(), setup,
              name);
        break;
    }
  }
  setup.until_ready(
      [&] {
        const cudaError_t status = cudaStreamQuery(stream.get());
        if (status == cudaErrorNotReady) return false;
        PIPELAB_CUDA_CHECK(status);
        return true;
      },
      "NCCL's set-up between ranks (the warm-up's transfers)");
  // Only once they are done: a failure above leaves the buffers to the
  // kernels still using them until the abort (and cudaFree would wait).
  PIPELAB_CUDA_CHECK(cudaFree(values));
  PIPELAB_CUDA_CHECK(cudaFree(received));
}

ncclComm_t RankWorld::member(int index) const {
  const ncclComm_t comm = split_.at(static_cast<size_t>(index));
  if (!comm)
    throw std::logic_error("rank " + std::to_string(rank_) + " is not in communicator " +
                           std::to_string(index) + " between ranks");
  return comm;
}

int RankWorld::nccl_rank(int index) const { return split_key(plan_, index, rank_); }

size_t RankWorld::slice(int index, size_t elements) const {
  const size_t members = plan_.communicators.at(static_cast<size_t>(index)).ranks.size();
  if (elements % members != 0)
    throw std::invalid_argument("a collective between ranks needs a tensor that splits evenly "
                                "among its " + std::to_string(members) + " members");
  return elements / members;
}

void RankWorld::issue(GroupCollective collective, int index, float* whole, float* received,
                      size_t elements, cudaStream_t stream, const SetupWait& wait,
                      const std::string& step) const {
  const ncclComm_t comm = member(index);
  switch (collective) {
    case GroupCollective::AllReduce:
      complete(ncclAllReduce(whole, whole, elements, ncclFloat32, ncclSum, comm, stream), comm,
               step, wait);
      return;
    case GroupCollective::AllGather: {
      // In place: member i's slice at offset i (collective_steps.h).
      const size_t count = slice(index, elements);
      complete(
          ncclAllGather(whole + nccl_rank(index) * count, whole, count, ncclFloat32, comm, stream),
          comm, step, wait);
      return;
    }
    case GroupCollective::ReduceScatter: {
      const size_t count = slice(index, elements);
      complete(ncclReduceScatter(whole, whole + nccl_rank(index) * count, count, ncclFloat32,
                                 ncclSum, comm, stream),
               comm, step, wait);
      return;
    }
    case GroupCollective::AllToAll: {
      // NCCL cannot receive into the buffer it sends from.
      const size_t count = slice(index, elements);
      const int members = static_cast<int>(elements / count);
      PIPELAB_NCCL_CHECK(ncclGroupStart());
      for (int peer = 0; peer < members; ++peer) {
        PIPELAB_NCCL_CHECK(ncclSend(whole + peer * count, count, ncclFloat32, peer, comm, stream));
        PIPELAB_NCCL_CHECK(
            ncclRecv(received + peer * count, count, ncclFloat32, peer, comm, stream));
      }
      complete(ncclGroupEnd(), comm, step, wait);
      return;
    }
  }
}

void RankWorld::all_reduce_sum(int index, DeviceTensor& tensor, cudaStream_t stream) const {
  DeviceGuard guard(gpu_);
  issue(GroupCollective::AllReduce, index, tensor.data(), nullptr, element_count(tensor), stream,
        launch_wait_, "ncclAllReduce between ranks");
}

void RankWorld::all_gather(int index, DeviceTensor& tensor, cudaStream_t stream) const {
  DeviceGuard guard(gpu_);
  issue(GroupCollective::AllGather, index, tensor.data(), nullptr, element_count(tensor), stream,
        launch_wait_, "ncclAllGather between ranks");
}

void RankWorld::reduce_scatter(int index, DeviceTensor& tensor, cudaStream_t stream) const {
  DeviceGuard guard(gpu_);
  issue(GroupCollective::ReduceScatter, index, tensor.data(), nullptr, element_count(tensor),
        stream, launch_wait_, "ncclReduceScatter between ranks");
}

void RankWorld::all_to_all(int index, DeviceTensor& tensor, DeviceTensor& received,
                           cudaStream_t stream) const {
  DeviceGuard guard(gpu_);
  issue(GroupCollective::AllToAll, index, tensor.data(), received.data(), element_count(tensor),
        stream, launch_wait_, "the all-to-all between ranks");
}

void RankWorld::send(int index, const DeviceTensor& tensor, cudaStream_t stream) const {
  DeviceGuard guard(gpu_);
  const ncclComm_t comm = member(index);
  complete(ncclSend(tensor.data(), element_count(tensor), ncclFloat32, 1, comm, stream), comm,
           "ncclSend between ranks", launch_wait_);
}

void RankWorld::recv(int index, DeviceTensor& tensor, cudaStream_t stream) const {
  DeviceGuard guard(gpu_);
  const ncclComm_t comm = member(index);
  complete(ncclRecv(tensor.data(), element_count(tensor), ncclFloat32, 0, comm, stream), comm,
           "ncclRecv between ranks", launch_wait_);
}

}  // namespace pipelab::gpu

#endif  // PIPELAB_HAVE_NCCL
