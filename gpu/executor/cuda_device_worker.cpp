#include "gpu/executor/cuda_device_worker.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>

#include "core/runtime/microbatch_loss.h"
#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"
#include "gpu/memory/out_of_memory.h"
#include "gpu/device/stream_order.h"

namespace pipelab::gpu {
namespace {

int64_t parameter_bytes(const std::vector<GpuParameter>& parameters) {
  int64_t bytes = 0;
  for (const GpuParameter& parameter : parameters) bytes += parameter.value->bytes();
  return bytes;
}

// Runs a backward (or recompute) on an older weight version and puts the
// current one back however the scope ends.
class VersionInUse {
 public:
  VersionInUse(GpuWeightStash& stash, int version) : stash_(stash) { stash_.use(version); }
  ~VersionInUse() { stash_.restore_current(); }
  VersionInUse(const VersionInUse&) = delete;
  VersionInUse& operator=(const VersionInUse&) = delete;

 private:
  GpuWeightStash& stash_;
};

}  // namespace

CudaDeviceWorker::CudaDeviceWorker(CudaWorkerShared& shared, int device)
    : shared_(shared), device_(device) {
  const Experiment& experiment = shared_.experiment;
  const ParallelPlan& plan = experiment.parallel;
  const DeviceCoord coord = device_coord(plan, device);
  replica_ = coord.replica;
  rank_ = coord.pipeline_rank;
  shard_ = coord.shard;
  last_stage_ = plan.stages() - 1;
  const bool async_data_parallel = plan.update == UpdateMode::Async && plan.dp > 1;

  DeviceContext& context = *self().context;
  for (int chunk = 0; chunk < plan.chunks; ++chunk) {
    StageState state;
    state.stage = chunk * plan.pp + rank_;
    const LayerRange range = shared_.stage_ranges[state.stage];
    GpuTensorParallelSetup tensor_parallel;
    tensor_parallel.degree = plan.tp;
    tensor_parallel.shard = shard_;
    if (plan.tp > 1) {
      tensor_parallel.roles = shared_.tp_roles;
      tensor_parallel.all_reduce = [this](DeviceTensor& values, int layer, bool) {
        tensor_parallel_all_reduce(values, layer);
      };
    }
    state.layers = std::make_unique<GpuSequential>(experiment.model, range.begin, range.end,
                                                   experiment.seed, context, tensor_parallel);
    if (!async_data_parallel)
      state.optimizer = make_gpu_optimizer(optimizer_settings(experiment.training.optimizer),
                                           state.layers->parameters());
    state.versions = std::make_unique<GpuWeightStash>(state.layers->parameters());
    stages_.push_back(std::move(state));
  }
  staging_ = std::make_unique<PinnedStaging>(self().gpu);
}

CudaDeviceWorker::~CudaDeviceWorker() { drop_in_flight(); }

HostStageMirror& CudaDeviceWorker::host_mirror(int chunk) {
  StageState& stage = stages_[chunk];
  if (!stage.mirror)
    stage.mirror = std::make_unique<HostStageMirror>(
        shared_.experiment.model, shared_.experiment.seed, *stage.layers,
        shared_.experiment.parallel.tp, shard_, shared_.tp_roles);
  return *stage.mirror;
}

void CudaDeviceWorker::run() {
  try {
    // CUDA's current device is per thread: this thread works on its GPU.
    PIPELAB_CUDA_CHECK(cudaSetDevice(self().gpu));
    timings_ = std::make_unique<OpTimings>(device_, self().gpu, compute(), shared_.clock,
                                           shared_.recorder);
    run_windows();
    timings_->emit_all();
  } catch (const RunStopped&) {
    // The run is stopping: leave quietly.
  } catch (const GpuOutOfMemory& error) {
    shared_.fail(error.what());
  } catch (const std::bad_alloc&) {
    shared_.fail("device " + std::to_string(device_) +
                 " ran out of host memory; use a smaller model, batch or fewer micro-batches in "
                 "flight");
  } catch (const std::exception& error) {
    shared_.fail("device " + std::to_string(device_) + ": " + error.what());
  }
  if (timings_) timings_->abandon();  // no-op after a clean finish
  shared_.control.worker_done(device_);
}

void CudaDeviceWorker::meet(size_t& next_point, int64_t position) {
  const auto& points = shared_.meeting_points;
  while (next_point < points.size() && points[next_point].positions[device_] == position) {
    const int step = points[next_point].step;
    shared_.rendezvous.arrive(device_, [&] { shared_.at_meeting_point(step); });
    ++next_point;
  }
}

void CudaDeviceWorker::run_windows() {
  size_t next_point = 0;
  for (const TrainingWindow& window : shared_.program.windows()) {
    const std::vector<Op>& ops = window.schedule->devices[device_];
    const std::vector<int>& last_op = window.boundaries->last_op_of_step()[device_];
    for (StageState& stage : stages_) stage.window_base_version = stage.versions->current();
    tensor_parallel_reported_.assign(ops.size(), 0);
    for (int s = 0; s < window.steps; ++s)  // steps this device has nothing to do in
      if (last_op[s] < 0) shared_.recorder.device_finished_step(window.first_step + s);

    for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
      const int64_t position = window.first_position[device_] + i;
      meet(next_point, position);
      if (!shared_.control.wait_for_turn(device_, position)) return;
      run_op(window, i);
      if (last_op[ops[i].step] == i)
        finish_step(window.first_step + ops[i].step);
      else
        timings_->emit_ready();
    }
  }
  meet(next_point, shared_.program.end_positions()[device_]);
}

void CudaDeviceWorker::finish_step(int step) {
  timings_->emit_all();  // waits for this device's queued work
  for (PendingLoss& pending : pending_losses_) {
    LossResult totals = pending.loss.totals();
    if (!pending.correct.row_correct.empty()) totals.correct = pending.correct.totals().correct;
    shared_.recorder.loss(pending.step, replica_, pending.microbatch, totals);
  }
  pending_losses_.clear();
  shared_.recorder.device_finished_step(step);
}

void CudaDeviceWorker::run_op(const TrainingWindow& window, int index) {
  const std::vector<Op>& ops = window.schedule->devices[device_];
  Op op = ops[index];
  op.step += window.first_step;
  current_ = {&ops, index, window.first_step};
  int64_t bytes = 0;
  switch (op.kind) {
    case OpKind::Forward:
      timings_->begin(compute(), op);
      forward(op);
      timings_->end(compute(), op, 0);
      break;
    case OpKind::Backward:
    case OpKind::BackwardInput:
      timings_->begin(compute(), op);
      backward(op);
      timings_->end(compute(), op, 0);
      break;
    case OpKind::BackwardWeight:
      timings_->begin(compute(), op);
      backward_weight(op);
      timings_->end(compute(), op, 0);
      break;
    case OpKind::Recompute:
      timings_->begin(compute(), op);
      recompute(op);
      timings_->end(compute(), op, 0);
      break;
    case OpKind::Update:
      // The version U writes, known before it runs: it names the NVTX range.
      op.weight_version = stages_[op.chunk].versions->current() + 1;
      timings_->begin(compute(), op);
      update(op, ops[index].weight_version);
      timings_->end(compute(), op, 0);
      break;
    case OpKind::SendActivation:
    case OpKind::SendGradient:
      send(op);  // timed on the comm stream inside
      break;
    case OpKind::RecvActivation:
    case OpKind::RecvGradient:
      receive(op);  // timed on the compute stream inside
      break;
    case OpKind::AllReduce:
      if (op.group == CommGroup::DataParallel) {
        timings_->begin(compute(), op);
        bytes = data_parallel_all_reduce(op);
        timings_->end(compute(), op, bytes);
      } else if (!tensor_parallel_reported_[index]) {
        // No all-reduce was needed (a column-parallel first layer of stage 0
        // computes no input gradient): reported as a zero-length op.
        timings_->begin(compute(), op);
        timings_->end(compute(), op, 0);
      }
      break;
    case OpKind::PushGradient:
      timings_->begin(compute(), op);
      bytes = push(op);
      timings_->end(compute(), op, bytes);
      break;
    case OpKind::PullWeights:
      op.weight_version = std::max(0, op.step + 1 - shared_.experiment.parallel.staleness);
      timings_->begin(compute(), op);
      bytes = pull(op);
      timings_->end(compute(), op, bytes);
      break;
    case OpKind::Offload:
    case OpKind::Reload:
      // Activations stay in device memory: reported as zero-length ops.
      timings_->begin(compute(), op);
      timings_->end(compute(), op, 0);
      break;
  }
}

DeviceTensor CudaDeviceWorker::take(std::map<MicrobatchKey, DeviceTensor>& from,
                                    const MicrobatchKey& key, const char* what) {
  auto found = from.find(key);
  if (found == from.end())
    throw std::logic_error(std::string("schedule error: no ") + what + " for micro-batch " +
                           std::to_string(key.microbatch) + " of step " + std::to_string(key.step) +
                           " on chunk " + std::to_string(key.chunk));
  DeviceTensor tensor = std::move(found->second);
  from.erase(found);
  return tensor;
}

void CudaDeviceWorker::forward(Op& op) {
  StageState& stage = stages_[op.chunk];
  const MicrobatchKey key = key_of(op);
  TrainingData& data = shared_.data;
  DeviceTensor input;
  if (op.stage == 0) {
    const Tensor host = data.inputs(op.step, replica_, op.microbatch, nullptr);
    input = staging_->upload(host, allocator(), MemoryCategory::Activations);
  } else {
    input = take(inputs_, key, "received activation");
  }
  op.weight_version = stage.versions->note_forward();
  forward_version_[key] = op.weight_version;

  ForwardInfo info;
  info.step = op.step;
  info.first_sample = data.first_row(replica_, op.microbatch);
  GpuStageActivations& saved = saved_[key];
  DeviceTensor output = stage.layers->forward(std::move(input), info, saved);

  if (op.stage == last_stage_)
    compute_loss(op, output);  // the output dies here; the loss's gradient waits for B
  else
    pass_on(op, std::move(output), true);
  if (shared_.experiment.parallel.recompute) stage.layers->drop_activations(saved);
}

void CudaDeviceWorker::compute_loss(const Op& op, const DeviceTensor& output) {
  TrainingData& data = shared_.data;
  const MicrobatchTargets targets = data.targets(op.step, replica_, op.microbatch);
  const double scale = 1.0 / static_cast<double>(data.global_batch());
  PendingLoss pending;
  pending.step = op.step;
  pending.microbatch = op.microbatch;
  if (data.loss() == LossType::CrossEntropy) {
    pending.loss = gpu_softmax_cross_entropy(output, targets.labels, scale, true);
  } else {
    DeviceTensor expected = DeviceTensor::uninitialized(targets.rows, targets.width, &allocator(),
                                                        MemoryCategory::Workspace);
    expected.copy_from_host(targets.targets);
    pending.loss = gpu_mean_squared_error(output, expected, scale, true);
    // Accuracy on a classification set, as the CPU counts it (the first
    // maximal output is the label): the cross-entropy kernel's hit count.
    if (!targets.labels.empty())
      pending.correct = gpu_softmax_cross_entropy(output, targets.labels, 1.0, false);
  }
  output_grads_[key_of(op)] = std::move(pending.loss.grad);
  // Only shard 0 reports, as on the CPU (every shard computes the same loss).
  if (shard_ == 0) pending_losses_.push_back(std::move(pending));
}

void CudaDeviceWorker::backward(Op& op) {
  StageState& stage = stages_[op.chunk];
  const MicrobatchKey key = key_of(op);
  DeviceTensor output_grad = take(output_grads_, key, "output gradient");
  op.weight_version = forward_version_.at(key);
  GpuStageActivations& saved = saved_.at(key);
  DeviceTensor input_grad;
  {
    VersionInUse in_use(*stage.versions, op.weight_version);
    input_grad = op.kind == OpKind::Backward
                     ? stage.layers->backward(std::move(output_grad), saved)
                     : stage.layers->backward_input(std::move(output_grad), saved);
  }
  if (op.kind == OpKind::Backward) finish_microbatch(key, stage);
  if (!input_grad.empty()) pass_on(op, std::move(input_grad), false);
}

void CudaDeviceWorker::backward_weight(Op& op) {
  StageState& stage = stages_[op.chunk];
  const MicrobatchKey key = key_of(op);
  op.weight_version = forward_version_.at(key);
  stage.layers->backward_weight(saved_.at(key));
  finish_microbatch(key, stage);
}

void CudaDeviceWorker::recompute(Op& op) {
  StageState& stage = stages_[op.chunk];
  const MicrobatchKey key = key_of(op);
  op.weight_version = forward_version_.at(key);
  VersionInUse in_use(*stage.versions, op.weight_version);
  stage.layers->recompute(saved_.at(key));
}

void CudaDeviceWorker::finish_microbatch(const MicrobatchKey& key, StageState& stage) {
  saved_.erase(key);
  const auto version = forward_version_.find(key);
  stage.versions->release(version->second);
  forward_version_.erase(version);
}

void CudaDeviceWorker::update(Op& op, int scheduled_version) {
  StageState& stage = stages_[op.chunk];
  stage.versions->before_update();
  stage.optimizer->step();
  stage.layers->zero_grad();
  stage.versions->after_update(stage.versions->current() + 1);
  op.weight_version = stage.versions->current();
  assert(op.weight_version == stage.window_base_version + scheduled_version);
  (void)scheduled_version;
}

void CudaDeviceWorker::pass_on(const Op& op, DeviceTensor tensor, bool forward) {
  const Schedule& schedule = *shared_.program.windows().front().schedule;
  const int to_stage = op.stage + (forward ? 1 : -1);
  const int to_device = schedule.device_of_stage(to_stage, replica_, shard_);
  if (to_device == device_) {
    const MicrobatchKey to_key{to_stage / schedule.pp, op.step, op.microbatch};
    (forward ? inputs_ : output_grads_)[to_key] = std::move(tensor);
  } else {
    (forward ? outgoing_activations_ : outgoing_gradients_)[key_of(op)] = std::move(tensor);
  }
}

int64_t CudaDeviceWorker::send(const Op& op) {
  const bool activation = op.kind == OpKind::SendActivation;
  DeviceTensor message = take(activation ? outgoing_activations_ : outgoing_gradients_, key_of(op),
                              activation ? "activation to send" : "gradient to send");
  const MessageTag tag = activation
                             ? MessageTag::activation(device_, op.stage, op.step, op.microbatch)
                             : MessageTag::gradient(device_, op.stage, op.step, op.microbatch);
  VirtualDevice& from = self();
  VirtualDevice& to = *shared_.devices[op.peer];
  // The comm stream starts once the compute stream has produced the tensor.
  wait_for(from.comm_on_device(), from.compute_on_device());
  timings_->begin(from.comm.get(), op);
  DeviceMessage sent = shared_.routes.transfer(from, to, message);
  timings_->end(from.comm.get(), op, message.bytes());
  to.mailbox.post(tag, std::move(sent));
  return message.bytes();  // `message` dies here; its block waits for the comm stream
}

int64_t CudaDeviceWorker::receive(const Op& op) {
  const bool activation = op.kind == OpKind::RecvActivation;
  const MessageTag tag = activation
                             ? MessageTag::activation(op.peer, op.stage - 1, op.step, op.microbatch)
                             : MessageTag::gradient(op.peer, op.stage + 1, op.step, op.microbatch);
  DeviceMessage message = self().mailbox.receive(tag);
  const int64_t bytes = message.tensor.bytes();
  // The op lasts while the compute stream waits for the data to arrive.
  timings_->begin(compute(), op);
  message.arrived.make_wait(compute());
  timings_->end(compute(), op, bytes);
  message.tensor.retag(MemoryCategory::Activations);  // consumed: from here on it is the stage's
  (activation ? inputs_ : output_grads_)[key_of(op)] = std::move(message.tensor);
  return bytes;
}

int64_t CudaDeviceWorker::data_parallel_all_reduce(const Op& op) {
  const std::vector<GpuParameter> parameters = stages_[op.chunk].layers->parameters();
  int64_t count = 0;
  for (const GpuParameter& parameter : parameters) count += parameter.grad->size();
  // One contiguous buffer: one collective instead of one per parameter.
  DeviceTensor flat =
      DeviceTensor::uninitialized(1, count, &allocator(), MemoryCategory::Workspace);
  const size_t float_bytes = sizeof(float);
  int64_t offset = 0;
  for (const GpuParameter& parameter : parameters) {
    PIPELAB_CUDA_CHECK(cudaMemcpyAsync(flat.data() + offset, parameter.grad->data(),
                                       static_cast<size_t>(parameter.grad->size()) * float_bytes,
                                       cudaMemcpyDeviceToDevice, compute()));
    offset += parameter.grad->size();
  }
  shared_.data_parallel_groups[device_]->all_reduce(replica_, flat);
  offset = 0;
  for (const GpuParameter& parameter : parameters) {
    PIPELAB_CUDA_CHECK(cudaMemcpyAsync(parameter.grad->data(), flat.data() + offset,
                                       static_cast<size_t>(parameter.grad->size()) * float_bytes,
                                       cudaMemcpyDeviceToDevice, compute()));
    offset += parameter.grad->size();
  }
  return count * static_cast<int64_t>(float_bytes);
}

void CudaDeviceWorker::tensor_parallel_all_reduce(DeviceTensor& values, int layer) {
  // The schedule lists this all-reduce right after the compute op running it;
  // a recomputation repeats forward all-reduces the schedule does not list.
  const std::vector<Op>& ops = *current_.ops;
  const Op* listed = nullptr;
  for (size_t j = current_.index + 1; j < ops.size() && ops[j].kind == OpKind::AllReduce &&
                                      ops[j].group == CommGroup::TensorParallel;
       ++j) {
    if (ops[j].layer != layer || tensor_parallel_reported_[j]) continue;
    tensor_parallel_reported_[j] = 1;
    listed = &ops[j];
    break;
  }
  Op op;
  if (listed) {
    op = *listed;
    op.step += current_.first_step;
    timings_->begin(compute(), op);
  }
  shared_.tensor_parallel_groups[device_]->all_reduce(shard_, values);
  if (listed) timings_->end(compute(), op, values.bytes());
}

int64_t CudaDeviceWorker::push(const Op& op) {
  StageState& stage = stages_[op.chunk];
  HostStageMirror& mirror = host_mirror(op.chunk);
  ParameterServer& server = *shared_.servers[op.stage * shared_.experiment.parallel.tp + shard_];
  mirror.copy_gradients_from_device();  // waits for the compute stream
  server.push(op.step, replica_, mirror.parameters());
  stage.layers->zero_grad();
  return parameter_bytes(stage.layers->parameters());
}

int64_t CudaDeviceWorker::pull(Op& op) {
  StageState& stage = stages_[op.chunk];
  HostStageMirror& mirror = host_mirror(op.chunk);
  ParameterServer& server = *shared_.servers[op.stage * shared_.experiment.parallel.tp + shard_];
  // Bounded staleness: the version holding every gradient of steps 0 .. t - staleness.
  const int version = std::max(0, op.step + 1 - shared_.experiment.parallel.staleness);
  stage.versions->before_update();
  server.pull(version, replica_, device_, mirror.parameters());
  mirror.copy_values_to_device();
  stage.versions->after_update(version);
  op.weight_version = version;
  return parameter_bytes(stage.layers->parameters());
}

void CudaDeviceWorker::drop_in_flight() {
  saved_.clear();
  forward_version_.clear();
  inputs_.clear();
  output_grads_.clear();
  outgoing_activations_.clear();
  outgoing_gradients_.clear();
  pending_losses_.clear();
  for (StageState& stage : stages_) stage.versions->clear();
}

}  // namespace pipelab::gpu
