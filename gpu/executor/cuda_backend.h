// CudaBackend: what the executor loop (core/runtime/device_worker.h) runs one
// CUDA virtual device's ops on. The loop (weight versions, micro-batches,
// meetings, run control) is the CPU's; this class supplies the device side:
//
//   math         GpuSequential and GpuOptimizer on the device's context
//   timing       a CUDA event pair per op on the stream that runs it
//                (OpTimings), reported once the GPU has passed it; a device's
//                ops and losses of a step are all reported before the step is
//   stage input  uploaded through pinned staging (PinnedStaging)
//   loss         kernels on the GPU, totals read back at the end of the step
//   Send         on the comm stream (message_routes.h), timed there
//   Recv         the compute stream waits for the message's arrival, timed there
//   collectives  DeviceGroup (NCCL across GPUs, copies on one GPU): all-reduces,
//                sequence parallelism's reduce-scatter and all-gather, the moe
//                layers' all-to-all
//   host views   a HostStageMirror per chunk (evaluation, parameter servers,
//                optimizer offloading)
//
// Across processes (pipelab-cli under mpirun, core/runtime/process_share.h)
// a rank builds only its own virtual devices; whatever reaches a device on
// another rank is staged through host memory (host_staging.h) and travels on
// the CPU backend's machinery: a Send comes down into pinned memory and is
// posted on the host transport (MPI), a Recv from another rank takes the
// message from the device's host mailbox and uploads it, and a collective
// whose group spans ranks (any of the four kinds above) comes down, runs the
// CPU backend's over the transport (ring_allreduce.h, all_to_all.h) and goes
// back up, unless every member of the group has a GPU of its own: then it
// runs on NCCL between ranks (rank_world.h, rank_comm_plan.h). Likewise a
// message on a link whose ends each have a GPU and whose messages arrive in
// send order: its shape goes over the host transport, the tensor on NCCL
// (rank_comm_plan.h says why this cannot deadlock). Links and groups inside
// the rank keep the paths above.
//
// PIPELAB_CUDA_SYNC=1 (debug): after every op, both streams are synchronised
// and checked, and a fault names the op that caused it.
//
// CudaDevices is what every CUDA device of a run shares: the virtual devices,
// the run's NCCL side (communicators per GPU set, the launch lock, abort), the
// message routes and the collective groups.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/cpu_backend.h"
#include "core/runtime/device_worker.h"
#include "core/comm/message_tag.h"
#include "core/comm/ring_allreduce.h"
#include "gpu/comm/comm_world.h"
#include "gpu/comm/device_group.h"
#include "gpu/comm/host_staging.h"
#include "gpu/comm/message_routes.h"
#include "gpu/comm/rank_comm_plan.h"
#include "gpu/comm/rank_world.h"
#include "gpu/executor/host_offload.h"
#include "gpu/executor/host_stage_mirror.h"
#include "gpu/executor/op_timings.h"
#include "gpu/comm/virtual_device.h"
#include "gpu/layers/loss.h"
#include "gpu/layers/optimizer.h"
#include "gpu/layers/sequential.h"
#include "gpu/layers/token_loss.h"
#include "gpu/memory/pinned_staging.h"

namespace pipelab::gpu {

struct CudaDevices {
  // Per virtual device; null for the devices other processes run.
  std::vector<std::unique_ptr<VirtualDevice>> devices;
  std::unique_ptr<CommWorld> comm_world;                // outlives the routes and groups using it
  std::unique_ptr<MessageRoutes> routes;
  std::vector<std::unique_ptr<DeviceGroup>> groups;
  // Per virtual device: its groups of each kind (device_mapping.h's
  // CollectiveGroups; null when the group has one member or none is made).
  std::vector<DeviceGroup*> data_parallel_group_of;
  std::vector<DeviceGroup*> tensor_parallel_group_of;
  std::vector<DeviceGroup*> expert_parallel_group_of;
  std::vector<DeviceGroup*> expert_data_parallel_group_of;
  std::vector<DeviceGroup*> context_parallel_group_of;

  // A run over processes: the host side of every tensor to or from another
  // rank, the CPU backend's own (a host mailbox per device this rank runs, on
  // an allocator that reports nothing, and the transport over MPI); null in
  // one process. Per virtual device, its groups that span ranks as rings over
  // that transport (no members when the group stays in this rank).
  std::unique_ptr<CpuDevices> host;
  std::vector<RingGroup> data_parallel_ring_of;
  std::vector<RingGroup> tensor_parallel_ring_of;
  std::vector<RingGroup> expert_parallel_ring_of;
  std::vector<RingGroup> expert_data_parallel_ring_of;
  std::vector<RingGroup> context_parallel_ring_of;
  // Where every member of a group spanning ranks has a GPU of its own, NCCL
  // between ranks instead of the rings (rank_comm_plan.h): this rank's
  // communicators, and per virtual device the index of each kind's group's
  // communicator (-1: none).
  RankCommPlan rank_plan;
#ifdef PIPELAB_HAVE_NCCL
  std::unique_ptr<RankWorld> rank_world;  // attached to comm_world (its launch lock and abort)
#endif
  // Per directed link between ranks on NCCL (from, to), for the end this
  // rank hosts: the link's communicator and the stream that end issues on
  // (that link's alone, so a blocked transfer holds back only its own link).
  std::map<std::pair<int, int>, int> rank_link_communicator;
  std::map<std::pair<int, int>, CudaStream> rank_link_stream;
  std::vector<int> data_parallel_rank_comm_of;
  std::vector<int> tensor_parallel_rank_comm_of;
  std::vector<int> expert_parallel_rank_comm_of;
  std::vector<int> expert_data_parallel_rank_comm_of;
  std::vector<int> context_parallel_rank_comm_of;

  bool hosts(int device) const { return devices[static_cast<size_t>(device)] != nullptr; }
  // What pipeline_executor.h needs across processes.
  Transport& transport() { return host->transport(); }
  Mailbox& host_mailbox(int device) { return host->host_mailbox(device); }
  const std::vector<std::unique_ptr<Mailbox>>& host_mailboxes() const { return host->host_mailboxes(); }
  void set_server_inbox(InProcessTransport::ServerInbox inbox) {
    host->set_server_inbox(std::move(inbox));
  }

  // With no worker running: frees undelivered messages, then lets the GPUs
  // finish what was queued, so counted memory really is idle.
  void release_in_flight();
};

// Whether PIPELAB_CUDA_SYNC asks for a synchronising, checking run.
bool cuda_sync_mode();

class CudaBackend {
 public:
  using Devices = CudaDevices;
  using Stack = GpuSequential;
  using Optimizer = GpuOptimizer;

  CudaBackend(CudaDevices& devices, WorkerShared& shared, const WorkerPlace& place);
  ~CudaBackend();

  std::unique_ptr<GpuSequential> make_stack(const LayerRange& range,
                                            GpuTensorParallelSetup tensor_parallel,
                                            const GpuSequential::BuiltLayer& built = {});
  std::unique_ptr<GpuOptimizer> make_optimizer(const OptimizerSettings& settings,
                                               std::vector<GpuParameter> parameters);

  // The worker's thread works on the device's GPU; its timings live there.
  void enter_thread();
  void leave_thread();
  std::string failure_message(const std::exception& error) const;

  // Timing on the compute stream (sends time themselves on the comm stream).
  void begin(const Op& op);
  void end(const Op& op, int64_t bytes);
  // Reports the ops the GPU has finished; in sync mode, waits and checks.
  void op_done(const Op& op);
  // Waits for and reports every queued op and loss.
  void report_all();

  DeviceTensor stage_input(const Op& op);
  DeviceTensor loss_gradient(const Op& op, const DeviceTensor& output,
                             const std::function<void(DeviceTensor&)>& tensor_parallel_sum);
  int64_t send(const Op& op, const MessageTag& tag, DeviceTensor message);
  DeviceTensor receive(const Op& op, const MessageTag& tag);

  // As the CPU backend's (core/runtime/cpu_backend.h), on the compute stream.
  DeviceTensor gather_gradients(const std::vector<GpuParameter>& parameters, int64_t padded_count = 0);
  void scatter_gradients(const DeviceTensor& flat, const std::vector<GpuParameter>& parameters);
  // ZeRO's pieces (device_worker.h). A renewed gradient keeps its bf16
  // products (DeviceTensor::accumulate_bf16_products).
  DeviceTensor zeros(int64_t rows, int64_t cols, MemoryCategory category);
  void renew(DeviceTensor& released, int64_t rows, int64_t cols, MemoryCategory category);
  void copy_values(const DeviceTensor& from, int64_t from_offset, DeviceTensor& to, int64_t to_offset,
                   int64_t count);
  void add_values(const DeviceTensor& from, int64_t from_offset, DeviceTensor& to, int64_t to_offset,
                  int64_t count);
  void data_parallel_reduce_scatter(DeviceTensor& flat, bool experts);
  void data_parallel_all_gather(DeviceTensor& flat, bool experts);
  void data_parallel_all_reduce(DeviceTensor& flat);
  void data_parallel_all_reduce(std::vector<float>& values);  // host values (batch statistics)
  void tensor_parallel_all_reduce(DeviceTensor& values);
  // Sequence parallelism's collectives over the tensor-parallel group, in
  // place on a whole-sequence staging tensor (gpu/layers/sequence_split.h) in
  // the CPU backend's slices (DeviceGroup): GpuSequential's blocks, embedding
  // and output layer call them.
  void tensor_parallel_reduce_scatter(DeviceTensor& values);
  void tensor_parallel_all_gather(DeviceTensor& values);
  // Context parallelism's collectives over the context-parallel group (the
  // ranks splitting this replica's sequences), as the tensor-parallel ones
  // run. The GPU stack's blocks do not split sequences yet (check_trainable
  // refuses cp > 1 on cuda), so nothing calls them until they do.
  void context_parallel_reduce_scatter(DeviceTensor& values);
  // Hands every rank's slice to `arrived` (may be empty) once all have
  // landed: NCCL's all-gather does not report its steps.
  void context_parallel_all_gather(DeviceTensor& values, const SliceArrival& arrived);
  // Expert parallelism: a moe layer's all-to-all over this replica's
  // expert-parallel group, and the sum of the experts' gradients over the
  // replicas holding the same experts (every ep-th replica).
  void expert_all_to_all(DeviceTensor& values);
  void expert_data_parallel_all_reduce(DeviceTensor& flat);
  // Offloading (host_offload.h): each returns the bytes it moved.
  int64_t offload_tensor(DeviceTensor& tensor) { return host_offload_.offload(tensor); }
  int64_t reload_tensor(DeviceTensor& tensor) { return host_offload_.reload(tensor); }

  // ZeRO-Offload's host slices (core/runtime/device_worker.h): host tensors
  // whose bytes the GPU's ledger counts as Host, and a device tensor's
  // values copied to one (waiting for the compute stream) and back.
  DeviceAllocator* host_allocator();
  void download(const DeviceTensor& from, Tensor& to);
  void upload(const Tensor& from, DeviceTensor& to);

  // A host copy of chunk `chunk`'s stage, made on first use (its pinned
  // buffers too: the executor makes the ones a run uses before it starts).
  Sequential& host_stage(GpuSequential& stage, int chunk);
  void copy_to_host(GpuSequential& stage, int chunk, ParameterPart part);
  void copy_values_to_device(GpuSequential& stage, int chunk);
  void drop_in_flight();

 private:
  // The context-parallel group's all-gather itself (NCCL, over ranks or on one process).
  void gather_over_context_group(DeviceTensor& values);
  // A run over processes: a message for, or from, a device on another rank;
  // an all-reduce over a group spanning ranks (`collective` numbers the
  // group's collectives, as ring_all_reduce wants).
  int64_t send_to_other_rank(const Op& op, const MessageTag& tag, DeviceTensor& message);
  DeviceTensor receive_from_other_rank(const Op& op, const MessageTag& tag);
  // A link between ranks on NCCL: the shape over the host transport, then
  // ncclSend on the link's stream after the compute stream's work so far
  // (false, nothing done, when the link is not on NCCL); and ncclRecv of a
  // message of that shape, which the compute stream waits for.
  bool send_on_nccl(const Op& op, const MessageTag& tag, DeviceTensor& message);
  DeviceTensor receive_on_nccl(const Op& op, int communicator, const Tensor& shape);
  // A collective whose group spans ranks: `values` come down into the host
  // staging buffer, `collective_on_host` (the CPU backend's: ring all-reduce,
  // reduce-scatter, all-gather or all-to-all) runs on them over the
  // transport, and the result goes back up.
  using RingCollective = void (*)(std::span<float>, const RingGroup&, int64_t);
  // A group spanning ranks on NCCL (rank_world.h): this member's part, on
  // its comm stream after the compute stream's work so far and before its
  // next. False (nothing done) when the group has no NCCL communicator.
  bool collective_on_nccl(const std::vector<int>& communicator_of, DeviceTensor& values,
                          GroupCollective kind);
  void collective_over_ranks(DeviceTensor& values, const RingGroup& ring, int64_t collective,
                             RingCollective collective_on_host);
  // ZeRO's reduce-scatter or all-gather over the data-parallel group, or
  // (`experts`) over the replicas holding the same experts.
  void sharding_collective(GroupCollective kind, DeviceTensor& flat, bool experts);

  // A loss whose sums the GPU is still computing.
  struct PendingLoss {
    int step = 0;
    int microbatch = 0;
    GpuLossResult loss;     // row losses (and, for cross-entropy, hits)
    GpuLossResult correct;  // mse on a classification set: hits from the arg-max
  };

  VirtualDevice& self() { return *devices_.devices[static_cast<size_t>(place_.device)]; }
  CachingAllocator& allocator() { return self().allocator(); }
  cudaStream_t compute() { return self().compute_stream(); }
  HostStageMirror& mirror(GpuSequential& stage, int chunk);

  CudaDevices& devices_;
  WorkerShared& shared_;
  const WorkerPlace place_;
  const bool sync_mode_;
  std::unique_ptr<OpTimings> timings_;      // made on the worker's thread
  std::unique_ptr<PinnedStaging> staging_;  // stage 0's input uploads
  std::vector<std::unique_ptr<HostStageMirror>> mirrors_;  // by chunk, made on first use
  std::unique_ptr<DeviceAllocator> host_allocator_;        // ZeRO-Offload's, made on first use
  int64_t counted_host_bytes_ = 0;                         // what host_allocator_ told the ledger
  std::vector<PendingLoss> pending_losses_;
  HostOffload host_offload_;
  std::unique_ptr<HostStaging> host_staging_;  // across processes only
  int64_t data_parallel_collectives_ = 0;      // over ranks, for the rings' tags
  int64_t tensor_parallel_collectives_ = 0;
  int64_t context_parallel_collectives_ = 0;
  int64_t expert_parallel_collectives_ = 0;
  int64_t expert_data_parallel_collectives_ = 0;
};

}  // namespace pipelab::gpu
