#ifdef PIPELAB_HAVE_NCCL

#include "gpu/comm/rank_world.h"

#include <unistd.h>

#include <cstring>
#include <stdexcept>

#include "core/runtime/run_control.h"
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

std::string gpu_identity(int gpu) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) std::strcpy(host, "unknown-host");
  char bus[64] = {};
  PIPELAB_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), gpu));
  return std::string(host) + "/" + bus;
}

RankWorld::RankWorld(const RankCommPlan& plan, int rank, int ranks, int gpu,
                     const Exchange& exchange, const SetupWait& setup)
    : plan_(plan), rank_(rank), gpu_(gpu), launch_wait_(setup), finalize_wait_(setup) {
  launch_wait_.timeout.reset();  // during the run: the run's silence detection stops it
  finalize_wait_.stopping = nullptr;  // a run ends stopped: finalizing comes after
  split_.assign(plan.communicators.size(), nullptr);
  if (!plan.needs_world()) return;
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
    complete(ncclCommInitRankConfig(&world_, ranks, id, rank, &config), world_,
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
    connect_links(setup);
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

void RankWorld::connect_links(const SetupWait& setup) {
  CudaStream stream(gpu_);
  float* one = nullptr;  // a float each link's first message carries
  PIPELAB_CUDA_CHECK(cudaMalloc(&one, sizeof(float)));
  PIPELAB_CUDA_CHECK(cudaMemsetAsync(one, 0, sizeof(float), stream.get()));
  for (size_t index = 0; index < split_.size(); ++index) {
    const ncclComm_t comm = split_[index];
    if (!comm || !plan_.communicators[index].point_to_point) continue;
    const int i = static_cast<int>(index);
    const std::vector<int>& ends = plan_.communicators[index].ranks;
    const std::string step = "NCCL's set-up between ranks (connecting link communicator " +
                             std::to_string(i) + ", rank " + std::to_string(ends[0]) +
                             " to rank " + std::to_string(ends[1]) + ")";
    if (nccl_rank(i) == 0)
      complete(ncclSend(one, 1, ncclFloat32, 1, comm, stream.get()), comm, step, setup);
    else
      complete(ncclRecv(one, 1, ncclFloat32, 0, comm, stream.get()), comm, step, setup);
  }
  setup.until_ready(
      [&] {
        const cudaError_t status = cudaStreamQuery(stream.get());
        if (status == cudaErrorNotReady) return false;
        PIPELAB_CUDA_CHECK(status);
        return true;
      },
      "NCCL's set-up between ranks (the links' first messages)");
  // Only once they are done: a failure above leaves the float to the kernels
  // still reading it until the abort (and cudaFree would wait for them).
  PIPELAB_CUDA_CHECK(cudaFree(one));
}

ncclComm_t RankWorld::member(int index) const {
  const ncclComm_t comm = split_.at(static_cast<size_t>(index));
  if (!comm)
    throw std::logic_error("rank " + std::to_string(rank_) + " is not in communicator " +
                           std::to_string(index) + " between ranks");
  return comm;
}

int RankWorld::nccl_rank(int index) const { return split_key(plan_, index, rank_); }

size_t RankWorld::slice(int index, const DeviceTensor& tensor) const {
  const size_t members = plan_.communicators.at(static_cast<size_t>(index)).ranks.size();
  if (element_count(tensor) % members != 0)
    throw std::invalid_argument("a collective between ranks needs a tensor that splits evenly "
                                "among its " + std::to_string(members) + " members");
  return element_count(tensor) / members;
}

void RankWorld::all_reduce_sum(int index, DeviceTensor& tensor, cudaStream_t stream) const {
  DeviceGuard guard(gpu_);
  const ncclComm_t comm = member(index);
  complete(ncclAllReduce(tensor.data(), tensor.data(), element_count(tensor), ncclFloat32, ncclSum,
                         comm, stream),
           comm, "ncclAllReduce between ranks", launch_wait_);
}

void RankWorld::all_gather(int index, DeviceTensor& tensor, cudaStream_t stream) const {
  DeviceGuard guard(gpu_);
  const size_t count = slice(index, tensor);
  float* whole = tensor.data();
  const ncclComm_t comm = member(index);
  complete(ncclAllGather(whole + nccl_rank(index) * count, whole, count, ncclFloat32, comm, stream),
           comm, "ncclAllGather between ranks", launch_wait_);
}

void RankWorld::reduce_scatter(int index, DeviceTensor& tensor, cudaStream_t stream) const {
  DeviceGuard guard(gpu_);
  const size_t count = slice(index, tensor);
  float* whole = tensor.data();
  const ncclComm_t comm = member(index);
  complete(ncclReduceScatter(whole, whole + nccl_rank(index) * count, count, ncclFloat32, ncclSum,
                             comm, stream),
           comm, "ncclReduceScatter between ranks", launch_wait_);
}

void RankWorld::all_to_all(int index, const DeviceTensor& tensor, DeviceTensor& received,
                           cudaStream_t stream) const {
  DeviceGuard guard(gpu_);
  const size_t count = slice(index, tensor);
  const ncclComm_t comm = member(index);
  const int members = static_cast<int>(plan_.communicators[static_cast<size_t>(index)].ranks.size());
  PIPELAB_NCCL_CHECK(ncclGroupStart());
  for (int peer = 0; peer < members; ++peer) {
    PIPELAB_NCCL_CHECK(ncclSend(tensor.data() + peer * count, count, ncclFloat32, peer, comm,
                                stream));
    PIPELAB_NCCL_CHECK(ncclRecv(received.data() + peer * count, count, ncclFloat32, peer, comm,
                                stream));
  }
  complete(ncclGroupEnd(), comm, "the all-to-all between ranks", launch_wait_);
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
