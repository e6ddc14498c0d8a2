#include "gpu/executor/cuda_backend.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <span>
#include <stdexcept>

#include "core/comm/all_to_all.h"
#include "core/runtime/microbatch_loss.h"
#include "core/runtime/vocab_parallel_loss.h"
#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"
#include "gpu/device/stream_order.h"
#include "gpu/kernels/elementwise.h"
#include "gpu/memory/out_of_memory.h"

namespace pipelab::gpu {

void CudaDevices::release_in_flight() {
  for (auto& device : devices)
    if (device) device->mailbox.clear();
  if (host) host->release_in_flight();
  for (auto& device : devices) {
    if (!device) continue;
    DeviceGuard guard(device->gpu, DeviceGuard::NoThrow{});
    PIPELAB_CUDA_WARN(cudaStreamSynchronize(device->compute_stream()));
    PIPELAB_CUDA_WARN(cudaStreamSynchronize(device->comm.get()));
    PIPELAB_CUDA_WARN(cudaStreamSynchronize(device->recv.get()));
  }
  for (const auto& [link, stream] : rank_link_stream) {
    DeviceGuard guard(stream.gpu(), DeviceGuard::NoThrow{});
    PIPELAB_CUDA_WARN(cudaStreamSynchronize(stream.get()));
  }
}

bool cuda_sync_mode() {
  const char* value = std::getenv("PIPELAB_CUDA_SYNC");
  return value != nullptr && std::strcmp(value, "") != 0 && std::strcmp(value, "0") != 0;
}

CudaBackend::CudaBackend(CudaDevices& devices, WorkerShared& shared, const WorkerPlace& place)
    : devices_(devices),
      shared_(shared),
      place_(place),
      sync_mode_(cuda_sync_mode()),
      host_offload_(*devices.devices[static_cast<size_t>(place.device)]) {
  // Pinned before the run starts: a micro-batch's inputs and targets.
  const TrainingData& data = shared_.data;
  staging_ = std::make_unique<PinnedStaging>(
      self().gpu, microbatch_staging_bytes(
                      data.microbatch_rows(), data.train().features,
                      std::max<int64_t>(data.train().target_width, data.train().classes)));
  mirrors_.resize(static_cast<size_t>(shared_.experiment.parallel.chunks));
  if (devices_.host) host_staging_ = std::make_unique<HostStaging>(self().gpu);
}

CudaBackend::~CudaBackend() = default;

std::unique_ptr<GpuSequential> CudaBackend::make_stack(const LayerRange& range,
                                                       GpuTensorParallelSetup tensor_parallel,
                                                       const GpuSequential::BuiltLayer& built) {
  const Experiment& experiment = shared_.experiment;
  return std::make_unique<GpuSequential>(experiment.model, range.begin, range.end, experiment.seed,
                                         *self().context, std::move(tensor_parallel),
                                         experiment.parallel.selective_recompute,
                                         expert_shard(experiment.parallel, place_.replica), built);
}

std::unique_ptr<GpuOptimizer> CudaBackend::make_optimizer(const OptimizerSettings& settings,
                                                          std::vector<GpuParameter> parameters) {
  return make_gpu_optimizer(settings, std::move(parameters));
}

void CudaBackend::enter_thread() {
  // CUDA's current device is per thread: this thread works on its GPU.
  PIPELAB_CUDA_CHECK(cudaSetDevice(self().gpu));
  timings_ = std::make_unique<OpTimings>(place_.device, self().gpu, compute(), shared_.clock,
                                         shared_.recorder);
}

void CudaBackend::leave_thread() {
  if (timings_) timings_->abandon();  // no-op after a clean finish
}

std::string CudaBackend::failure_message(const std::exception& error) const {
  // Out-of-memory messages name the device and the fix already.
  if (dynamic_cast<const GpuOutOfMemory*>(&error)) return error.what();
  return "device " + std::to_string(place_.device) + ": " + error.what();
}

// A micro-batch's OFFLOAD and RELOAD run (and are timed) on the copy stream;
// a B or BI first makes the compute stream wait for its micro-batch's reload.
// Optimizer offloading's copies go through the host mirror, on the compute stream.
namespace {
bool runs_on_copy_stream(const Op& op) {
  return op_kind_facts(op.kind).family == OpFamily::HostTransfer && op.microbatch >= 0;
}
}  // namespace

void CudaBackend::begin(const Op& op) {
  if (runs_on_copy_stream(op)) {
    host_offload_.copy_after_compute();
    timings_->begin(self().copy.get(), op);
    return;
  }
  if (computes_input_gradient(op.kind)) host_offload_.compute_waits_for_reload({op.chunk, op.step, op.microbatch});
  timings_->begin(compute(), op);
}

void CudaBackend::end(const Op& op, int64_t bytes) {
  if (runs_on_copy_stream(op)) {
    timings_->end(self().copy.get(), op, bytes);
    if (op.kind == OpKind::Reload) host_offload_.mark_reloaded({op.chunk, op.step, op.microbatch});
    return;
  }
  timings_->end(compute(), op, bytes);
}

void CudaBackend::op_done(const Op&) {
  if (sync_mode_) {
    // Debug: a fault surfaces at the op that caused it, not ops later.
    VirtualDevice& device = self();
    cudaError_t status = cudaSuccess;
    for (cudaStream_t stream :
         {device.compute_stream(), device.comm.get(), device.recv.get(), device.copy.get()}) {
      const cudaError_t stream_status = cudaStreamSynchronize(stream);
      if (status == cudaSuccess) status = stream_status;
    }
    if (status != cudaSuccess)
      // The loop adds which op this was.
      throw std::runtime_error("PIPELAB_CUDA_SYNC: GPU " + std::to_string(device.gpu) +
                               " faulted: " + cudaGetErrorString(status));
    PIPELAB_CUDA_CHECK(cudaGetLastError());
  }
  timings_->emit_ready();
}

void CudaBackend::report_all() {
  timings_->emit_all();  // waits for this device's queued work
  for (PendingLoss& pending : pending_losses_) {
    LossResult totals = pending.loss.totals();
    if (!pending.correct.row_correct.empty()) totals.correct = pending.correct.totals().correct;
    // Each context rank reports its positions' part (run_reporter.h).
    shared_.recorder.loss(pending.step, place_.data_parallel_rank(shared_.experiment.parallel.cp),
                          pending.microbatch, totals);
  }
  pending_losses_.clear();
}

DeviceTensor CudaBackend::stage_input(const Op& op) {
  const Tensor host =
      shared_.data.inputs(op.step, place_.replica, op.microbatch, nullptr, place_.context);
  return staging_->upload(host, allocator(), MemoryCategory::Activations);
}

DeviceTensor CudaBackend::loss_gradient(const Op& op, const DeviceTensor& output,
                                        const std::function<void(DeviceTensor&)>& tensor_parallel_sum) {
  TrainingData& data = shared_.data;
  const MicrobatchTargets targets =
      data.targets(op.step, place_.replica, op.microbatch, place_.context);
  PendingLoss pending;
  pending.step = op.step;
  pending.microbatch = op.microbatch;
  if (targets.tokens > 0) {
    // A sequence model: next-token cross-entropy, split by vocabulary when
    // the output layer is.
    const std::optional<VocabRange> shard = logits_shard(shared_.experiment, shared_.tp_roles, place_.shard);
    const VocabRange range = shard ? *shard : whole_vocab(output.cols() / targets.tokens);
    pending.loss = gpu_token_loss(
        output, targets, data.gradient_scale(op.step), true, range,
        shard ? shared_.experiment.parallel.tp : 1, shard ? place_.shard : 0,
        tensor_parallel_sum, staging_.get());
    DeviceTensor grad = std::move(pending.loss.grad);
    if (place_.shard == 0) pending_losses_.push_back(std::move(pending));
    return grad;
  }
  const double scale = data.gradient_scale(op.step);  // 1 / global batch here, as on the cpu
  // Labels and targets go up through pinned staging: no pageable copy stalls
  // this thread behind its GPU.
  DeviceBuffer labels;
  if (!targets.labels.empty())
    labels = upload_labels(targets.labels, targets.rows, output.cols(), allocator(), staging_.get());
  if (data.loss() == LossType::CrossEntropy) {
    pending.loss = gpu_softmax_cross_entropy(output, labels, scale, true);
  } else {
    const DeviceTensor expected = staging_->upload(targets.targets, targets.rows, targets.width,
                                                   allocator(), MemoryCategory::Workspace);
    pending.loss = gpu_mean_squared_error(output, expected, scale, true);
    // Accuracy on a classification set, as the CPU counts it (the first
    // maximal output is the label): the cross-entropy kernel's hit count.
    if (!targets.labels.empty())
      pending.correct = gpu_softmax_cross_entropy(output, labels, 1.0, false);
  }
  DeviceTensor grad = std::move(pending.loss.grad);
  // Only shard 0 reports, as on the CPU (every shard computes the same loss).
  if (place_.shard == 0) pending_losses_.push_back(std::move(pending));
  return grad;
}

int64_t CudaBackend::send(const Op& op, const MessageTag& tag, DeviceTensor message) {
  if (!devices_.hosts(op.peer)) return send_to_other_rank(op, tag, message);
  VirtualDevice& from = self();
  VirtualDevice& to = *devices_.devices[static_cast<size_t>(op.peer)];
  // The comm stream starts once the compute stream has produced the tensor.
  wait_for(from.comm_on_device(), from.compute_on_device());
  timings_->begin(from.comm.get(), op);
  DeviceMessage sent = devices_.routes->transfer(from, to, message);
  timings_->end(from.comm.get(), op, message.bytes());
  to.mailbox.post(tag, std::move(sent));
  return message.bytes();  // `message` dies here; its block waits for the comm stream
}

DeviceTensor CudaBackend::receive(const Op& op, const MessageTag& tag) {
  if (!devices_.hosts(op.peer)) return receive_from_other_rank(op, tag);
  DeviceMessage message = self().mailbox.receive(tag);
  // The op lasts while the compute stream waits for the data to arrive.
  begin(op);
  message.arrived.make_wait(compute());
  end(op, message.tensor.bytes());
  return std::move(message.tensor);
}

int64_t CudaBackend::send_to_other_rank(const Op& op, const MessageTag& tag,
                                        DeviceTensor& message) {
  if (send_on_nccl(op, tag, message)) return message.bytes();
  // Timed on the compute stream, which produced the tensor: the copy down.
  begin(op);
  const float* values = host_staging_->download(message);
  end(op, message.bytes());
  devices_.transport().post(op.peer, tag, values, message.rows(), message.cols());
  return message.bytes();
}

DeviceTensor CudaBackend::receive_from_other_rank(const Op& op, const MessageTag& tag) {
  // Staged: the message itself; on NCCL: its shape.
  const Tensor arrived = devices_.host_mailbox(place_.device).receive(tag);
  const auto link = devices_.rank_link_communicator.find({op.peer, place_.device});
  if (link != devices_.rank_link_communicator.end())
    return receive_on_nccl(op, link->second, arrived);
  begin(op);  // the copy up
  DeviceTensor tensor = staging_->upload(arrived, allocator(), MemoryCategory::CommBuffers);
  end(op, tensor.bytes());
  return tensor;
}

bool CudaBackend::send_on_nccl(const Op& op, const MessageTag& tag, DeviceTensor& message) {
  const auto link = devices_.rank_link_communicator.find({place_.device, op.peer});
  if (link == devices_.rank_link_communicator.end()) return false;
#ifdef PIPELAB_HAVE_NCCL
  const std::array<float, 2> shape = shape_message(message.rows(), message.cols());
  devices_.transport().post(op.peer, tag, shape.data(), 1, 2);
  const cudaStream_t stream = devices_.rank_link_stream.at(link->first).get();
  const StreamOnDevice on_link{stream, self().gpu};
  wait_for(on_link, self().compute_on_device());
  message.record_stream(on_link);
  timings_->begin(stream, op);
  {
    // One order with this process's other NCCL launches (message_routes.h).
    const auto lock = devices_.comm_world->lock_for_launch();
    devices_.rank_world->send(link->second, message, stream);
  }
  timings_->end(stream, op, message.bytes());
  return true;
#else
  (void)tag;
  (void)message;
  throw std::logic_error("a link between ranks is planned on NCCL in a build without NCCL");
#endif
}

DeviceTensor CudaBackend::receive_on_nccl(const Op& op, int communicator, const Tensor& shape) {
#ifdef PIPELAB_HAVE_NCCL
  const auto [rows, cols] =
      message_shape(std::span<const float>(shape.data(), static_cast<size_t>(shape.size())));
  const cudaStream_t stream = devices_.rank_link_stream.at({op.peer, place_.device}).get();
  const StreamOnDevice on_link{stream, self().gpu};
  // Memory no stream is using: the link's stream writes it first.
  DeviceTensor tensor =
      DeviceTensor::uninitialized_idle(rows, cols, &allocator(), MemoryCategory::CommBuffers);
  tensor.record_stream(on_link);
  {
    const auto lock = devices_.comm_world->lock_for_launch();
    devices_.rank_world->recv(communicator, tensor, stream);
  }
  begin(op);  // the compute stream waits for the arrival
  wait_for(self().compute_on_device(), on_link);
  end(op, tensor.bytes());
  return tensor;
#else
  (void)op;
  (void)communicator;
  (void)shape;
  throw std::logic_error("a link between ranks is planned on NCCL in a build without NCCL");
#endif
}

bool CudaBackend::collective_on_nccl(const std::vector<int>& communicator_of, DeviceTensor& values,
                                     GroupCollective kind) {
#ifdef PIPELAB_HAVE_NCCL
  const int communicator = communicator_of[static_cast<size_t>(place_.device)];
  if (communicator < 0) return false;
  VirtualDevice& device = self();
  const StreamOnDevice computing{compute(), device.gpu};
  wait_for(device.comm_on_device(), computing);
  values.record_stream(device.comm_on_device());
  const RankWorld& world = *devices_.rank_world;
  {
    // One order with this process's other NCCL launches (message_routes.h).
    const auto lock = devices_.comm_world->lock_for_launch();
    switch (kind) {
      case GroupCollective::AllReduce:
        world.all_reduce_sum(communicator, values, device.comm.get());
        break;
      case GroupCollective::ReduceScatter:
        world.reduce_scatter(communicator, values, device.comm.get());
        break;
      case GroupCollective::AllGather:
        world.all_gather(communicator, values, device.comm.get());
        break;
      case GroupCollective::AllToAll: {
        // NCCL cannot receive into the buffer it sends from.
        DeviceTensor received = DeviceTensor::uninitialized(values.rows(), values.cols(),
                                                            &allocator(), MemoryCategory::CommBuffers);
        received.record_stream(device.comm_on_device());
        world.all_to_all(communicator, values, received, device.comm.get());
        PIPELAB_CUDA_CHECK(cudaMemcpyAsync(values.data(), received.data(),
                                           static_cast<size_t>(values.bytes()),
                                           cudaMemcpyDeviceToDevice, device.comm.get()));
        break;
      }
    }
  }
  wait_for(computing, device.comm_on_device());
  return true;
#else
  (void)communicator_of;
  (void)values;
  (void)kind;
  return false;
#endif
}

void CudaBackend::collective_over_ranks(DeviceTensor& values, const RingGroup& ring,
                                        int64_t collective, RingCollective collective_on_host) {
  float* host = host_staging_->download(values);
  collective_on_host(std::span<float>(host, static_cast<size_t>(values.size())), ring, collective);
  host_staging_->upload_to(values);
}

DeviceTensor CudaBackend::gather_gradients(const std::vector<GpuParameter>& parameters,
                                           int64_t padded_count) {
  int64_t count = 0;
  for (const GpuParameter& parameter : parameters) count += parameter.grad->size();
  DeviceTensor flat =
      padded_count > count
          ? DeviceTensor(1, padded_count, &allocator(), MemoryCategory::Workspace)  // zeros past count
          : DeviceTensor::uninitialized(1, count, &allocator(), MemoryCategory::Workspace);
  int64_t offset = 0;
  for (const GpuParameter& parameter : parameters) {
    PIPELAB_CUDA_CHECK(cudaMemcpyAsync(flat.data() + offset, parameter.grad->data(),
                                       static_cast<size_t>(parameter.grad->bytes()),
                                       cudaMemcpyDeviceToDevice, compute()));
    offset += parameter.grad->size();
  }
  return flat;
}

void CudaBackend::scatter_gradients(const DeviceTensor& flat,
                                    const std::vector<GpuParameter>& parameters) {
  int64_t offset = 0;
  for (const GpuParameter& parameter : parameters) {
    PIPELAB_CUDA_CHECK(cudaMemcpyAsync(parameter.grad->data(), flat.data() + offset,
                                       static_cast<size_t>(parameter.grad->bytes()),
                                       cudaMemcpyDeviceToDevice, compute()));
    offset += parameter.grad->size();
  }
}

DeviceTensor CudaBackend::zeros(int64_t rows, int64_t cols, MemoryCategory category) {
  return DeviceTensor(rows, cols, &allocator(), category);
}

void CudaBackend::renew(DeviceTensor& released, int64_t rows, int64_t cols, MemoryCategory category) {
  const bool bf16_products = released.accumulates_bf16_products();
  released = zeros(rows, cols, category);
  if (bf16_products) released.accumulate_bf16_products();
}

void CudaBackend::copy_values(const DeviceTensor& from, int64_t from_offset, DeviceTensor& to,
                              int64_t to_offset, int64_t count) {
  PIPELAB_CUDA_CHECK(cudaMemcpyAsync(to.data() + to_offset, from.data() + from_offset,
                                     static_cast<size_t>(count) * sizeof(float), cudaMemcpyDeviceToDevice,
                                     compute()));
}

void CudaBackend::add_values(const DeviceTensor& from, int64_t from_offset, DeviceTensor& to,
                             int64_t to_offset, int64_t count) {
  kernels::add_into(to.data() + to_offset, from.data() + from_offset, count, compute());
}

void CudaBackend::data_parallel_reduce_scatter(DeviceTensor& flat, bool experts) {
  sharding_collective(GroupCollective::ReduceScatter, flat, experts);
}

void CudaBackend::data_parallel_all_gather(DeviceTensor& flat, bool experts) {
  sharding_collective(GroupCollective::AllGather, flat, experts);
}

void CudaBackend::sharding_collective(GroupCollective kind, DeviceTensor& flat, bool experts) {
  if (collective_on_nccl(experts ? devices_.expert_data_parallel_rank_comm_of : devices_.data_parallel_rank_comm_of,
                         flat, kind))
    return;
  const bool scatter = kind == GroupCollective::ReduceScatter;
  const size_t device = static_cast<size_t>(place_.device);
  const RingGroup& ring = experts ? devices_.expert_data_parallel_ring_of[device] : devices_.data_parallel_ring_of[device];
  int64_t& collectives = experts ? expert_data_parallel_collectives_ : data_parallel_collectives_;
  if (ring.size() > 0)
    return collective_over_ranks(flat, ring, collectives++, scatter ? ring_reduce_scatter : ring_all_gather);
  DeviceGroup* group = experts ? devices_.expert_data_parallel_group_of[device] : devices_.data_parallel_group_of[device];
  if (!group) return;
  // Member replica / ep of the replicas holding the same experts; of the
  // dense group, which spans the context ranks, replica x cp + context.
  const ParallelPlan& plan = shared_.experiment.parallel;
  const int member = experts ? place_.replica / plan.ep : place_.data_parallel_rank(plan.cp);
  if (scatter)
    group->reduce_scatter(member, flat);
  else
    group->all_gather(member, flat);
}

void CudaBackend::data_parallel_all_reduce(DeviceTensor& flat) {
  if (collective_on_nccl(devices_.data_parallel_rank_comm_of, flat, GroupCollective::AllReduce))
    return;
  const RingGroup& ring = devices_.data_parallel_ring_of[static_cast<size_t>(place_.device)];
  if (ring.size() > 0)
    return collective_over_ranks(flat, ring, data_parallel_collectives_++, ring_all_reduce);
  devices_.data_parallel_group_of[static_cast<size_t>(place_.device)]->all_reduce(
      place_.data_parallel_rank(shared_.experiment.parallel.cp), flat);
}

void CudaBackend::data_parallel_all_reduce(std::vector<float>& values) {
  DeviceTensor staged = DeviceTensor::from_values(1, static_cast<int64_t>(values.size()), values, &allocator(),
                                                  MemoryCategory::CommBuffers);
  data_parallel_all_reduce(staged);
  values = staged.to_vector();
}

void CudaBackend::tensor_parallel_all_reduce(DeviceTensor& values) {
  if (collective_on_nccl(devices_.tensor_parallel_rank_comm_of, values, GroupCollective::AllReduce))
    return;
  const RingGroup& ring = devices_.tensor_parallel_ring_of[static_cast<size_t>(place_.device)];
  if (ring.size() > 0)
    return collective_over_ranks(values, ring, tensor_parallel_collectives_++, ring_all_reduce);
  devices_.tensor_parallel_group_of[static_cast<size_t>(place_.device)]->all_reduce(place_.shard,
                                                                                    values);
}

void CudaBackend::context_parallel_reduce_scatter(DeviceTensor& values) {
  if (collective_on_nccl(devices_.context_parallel_rank_comm_of, values,
                         GroupCollective::ReduceScatter))
    return;
  const RingGroup& ring = devices_.context_parallel_ring_of[static_cast<size_t>(place_.device)];
  if (ring.size() > 0)
    return collective_over_ranks(values, ring, context_parallel_collectives_++,
                                 ring_reduce_scatter);
  if (DeviceGroup* group = devices_.context_parallel_group_of[static_cast<size_t>(place_.device)])
    group->reduce_scatter(place_.context, values);
}

void CudaBackend::context_parallel_all_gather(DeviceTensor& values, const SliceArrival& arrived) {
  gather_over_context_group(values);
  if (!arrived) return;
  // In the ring's order: this rank's own slice, then r - 1, r - 2, ...
  const int cp = shared_.experiment.parallel.cp;
  for (int k = 0; k < cp; ++k) arrived((place_.context - k + cp) % cp);
}

void CudaBackend::gather_over_context_group(DeviceTensor& values) {
  if (collective_on_nccl(devices_.context_parallel_rank_comm_of, values,
                         GroupCollective::AllGather))
    return;
  const RingGroup& ring = devices_.context_parallel_ring_of[static_cast<size_t>(place_.device)];
  if (ring.size() > 0)
    return collective_over_ranks(values, ring, context_parallel_collectives_++, ring_all_gather);
  if (DeviceGroup* group = devices_.context_parallel_group_of[static_cast<size_t>(place_.device)])
    group->all_gather(place_.context, values);
}

void CudaBackend::tensor_parallel_reduce_scatter(DeviceTensor& values) {
  if (collective_on_nccl(devices_.tensor_parallel_rank_comm_of, values,
                         GroupCollective::ReduceScatter))
    return;
  const RingGroup& ring = devices_.tensor_parallel_ring_of[static_cast<size_t>(place_.device)];
  if (ring.size() > 0)
    return collective_over_ranks(values, ring, tensor_parallel_collectives_++, ring_reduce_scatter);
  if (DeviceGroup* group = devices_.tensor_parallel_group_of[static_cast<size_t>(place_.device)])
    group->reduce_scatter(place_.shard, values);
}

void CudaBackend::tensor_parallel_all_gather(DeviceTensor& values) {
  if (collective_on_nccl(devices_.tensor_parallel_rank_comm_of, values, GroupCollective::AllGather))
    return;
  const RingGroup& ring = devices_.tensor_parallel_ring_of[static_cast<size_t>(place_.device)];
  if (ring.size() > 0)
    return collective_over_ranks(values, ring, tensor_parallel_collectives_++, ring_all_gather);
  if (DeviceGroup* group = devices_.tensor_parallel_group_of[static_cast<size_t>(place_.device)])
    group->all_gather(place_.shard, values);
}

void CudaBackend::expert_all_to_all(DeviceTensor& values) {
  if (collective_on_nccl(devices_.expert_parallel_rank_comm_of, values, GroupCollective::AllToAll))
    return;
  const RingGroup& ring = devices_.expert_parallel_ring_of[static_cast<size_t>(place_.device)];
  if (ring.size() > 0)
    return collective_over_ranks(values, ring, expert_parallel_collectives_++, all_to_all);
  if (DeviceGroup* group = devices_.expert_parallel_group_of[static_cast<size_t>(place_.device)])
    group->all_to_all(expert_shard(shared_.experiment.parallel, place_.replica).rank, values);
}

void CudaBackend::expert_data_parallel_all_reduce(DeviceTensor& flat) {
  if (collective_on_nccl(devices_.expert_data_parallel_rank_comm_of, flat,
                         GroupCollective::AllReduce))
    return;
  const RingGroup& ring =
      devices_.expert_data_parallel_ring_of[static_cast<size_t>(place_.device)];
  if (ring.size() > 0)
    return collective_over_ranks(flat, ring, expert_data_parallel_collectives_++, ring_all_reduce);
  // Member replica / ep of the replicas holding the same experts.
  if (DeviceGroup* group =
          devices_.expert_data_parallel_group_of[static_cast<size_t>(place_.device)])
    group->all_reduce(place_.replica / shared_.experiment.parallel.ep, flat);
}

HostStageMirror& CudaBackend::mirror(GpuSequential& stage, int chunk) {
  std::unique_ptr<HostStageMirror>& mirror = mirrors_[static_cast<size_t>(chunk)];
  if (!mirror)
    mirror = std::make_unique<HostStageMirror>(
        shared_.experiment.model, shared_.experiment.seed, stage, shared_.experiment.parallel.tp,
        place_.shard, shared_.tp_roles, expert_shard(shared_.experiment.parallel, place_.replica),
        allocator());
  return *mirror;
}

DeviceAllocator* CudaBackend::host_allocator() {
  if (!host_allocator_) {
    host_allocator_ = std::make_unique<DeviceAllocator>();
    host_allocator_->set_listener([this](const MemoryBytes& held) {
      const int64_t host = held[static_cast<size_t>(MemoryCategory::Host)];
      if (host == counted_host_bytes_) return;
      allocator().count_host(host - counted_host_bytes_);
      counted_host_bytes_ = host;
    });
  }
  return host_allocator_.get();
}

void CudaBackend::download(const DeviceTensor& from, Tensor& to) {
  if (from.rows() != to.rows() || from.cols() != to.cols())
    throw std::logic_error("download: a " + std::to_string(from.rows()) + " x " +
                           std::to_string(from.cols()) + " device tensor into a " +
                           std::to_string(to.rows()) + " x " + std::to_string(to.cols()) +
                           " host tensor");
  if (to.empty()) return;
  DeviceGuard guard(from.device());
  PIPELAB_CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), static_cast<size_t>(from.bytes()),
                                     cudaMemcpyDeviceToHost, compute()));
  PIPELAB_CUDA_CHECK(cudaStreamSynchronize(compute()));
}

void CudaBackend::upload(const Tensor& from, DeviceTensor& to) {
  to.copy_from_host(from);  // same shape, or it throws
}

Sequential& CudaBackend::host_stage(GpuSequential& stage, int chunk) {
  return mirror(stage, chunk).stage();
}

void CudaBackend::copy_to_host(GpuSequential& stage, int chunk, ParameterPart part) {
  HostStageMirror& host = mirror(stage, chunk);
  if (part == ParameterPart::Values)
    host.copy_values_from_device();
  else
    host.copy_gradients_from_device();  // waits for the compute stream
}

void CudaBackend::copy_values_to_device(GpuSequential& stage, int chunk) {
  mirror(stage, chunk).copy_values_to_device();
}

void CudaBackend::drop_in_flight() {
  pending_losses_.clear();
  host_offload_.drop();
}

}  // namespace pipelab::gpu
