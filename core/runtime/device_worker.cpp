#include "core/runtime/device_worker.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <new>
#include <span>
#include <stdexcept>

#include "core/runtime/microbatch_loss.h"

namespace pipelab {
namespace {

int64_t parameter_bytes(const std::vector<Parameter>& parameters) {
  int64_t bytes = 0;
  for (const Parameter& parameter : parameters) bytes += parameter.value->bytes();
  return bytes;
}

// Runs a backward (or recompute) on an older weight version and puts the
// current one back however the scope ends.
class VersionInUse {
 public:
  VersionInUse(WeightStash& stash, int version) : stash_(stash) { stash_.use(version); }
  ~VersionInUse() { stash_.restore_current(); }
  VersionInUse(const VersionInUse&) = delete;
  VersionInUse& operator=(const VersionInUse&) = delete;

 private:
  WeightStash& stash_;
};

}  // namespace

OptimizerSettings optimizer_settings(const OptimizerSpec& spec) {
  OptimizerSettings settings;
  const auto type = parse_optimizer_type(spec.type);
  if (!type)
    throw std::invalid_argument("training.optimizer.type = '" + spec.type +
                                "' is not an optimizer; use sgd, adam or adamw");
  settings.type = *type;
  settings.lr = spec.lr;
  settings.momentum = spec.momentum;
  settings.beta1 = spec.beta1;
  settings.beta2 = spec.beta2;
  settings.eps = spec.eps;
  settings.weight_decay = spec.weight_decay;
  return settings;
}

DeviceWorker::DeviceWorker(WorkerShared& shared, int device) : shared_(shared), device_(device) {
  const Experiment& experiment = shared_.experiment;
  const ParallelPlan& plan = experiment.parallel;
  const DeviceCoord coord = device_coord(plan, device);
  replica_ = coord.replica;
  rank_ = coord.pipeline_rank;
  shard_ = coord.shard;
  last_stage_ = plan.stages() - 1;
  const bool async_data_parallel = plan.update == UpdateMode::Async && plan.dp > 1;

  for (int chunk = 0; chunk < plan.chunks; ++chunk) {
    StageState state;
    state.stage = chunk * plan.pp + rank_;
    const LayerRange range = shared_.stage_ranges[state.stage];
    TensorParallelSetup tensor_parallel;
    tensor_parallel.degree = plan.tp;
    tensor_parallel.shard = shard_;
    if (plan.tp > 1) {
      tensor_parallel.roles = shared_.tp_roles;
      tensor_parallel.all_reduce = [this](Tensor& values, int layer, bool) {
        tensor_parallel_all_reduce(values, layer);
      };
    }
    state.layers = std::make_unique<Sequential>(experiment.model, range.begin, range.end,
                                                experiment.seed, &allocator(), tensor_parallel);
    if (!async_data_parallel)
      state.optimizer = make_optimizer(optimizer_settings(experiment.training.optimizer),
                                       state.layers->parameters());
    state.versions = std::make_unique<WeightStash>(state.layers->parameters());
    stages_.push_back(std::move(state));
  }

  auto ring = [&](MessageKind kind, int members, auto device_of_member, int rank) {
    RingGroup group;
    group.kind = kind;
    group.rank = rank;
    for (int member = 0; member < members; ++member) {
      const int member_device = device_of_member(member);
      group.devices.push_back(member_device);
      group.mailboxes.push_back(shared_.mailboxes[member_device].get());
    }
    return group;
  };
  tensor_parallel_group_ = ring(
      MessageKind::TensorParallelChunk, plan.tp,
      [&](int member) {
        return device_id(plan, {replica_, rank_, member});
      },
      shard_);
  data_parallel_group_ = ring(
      MessageKind::DataParallelChunk, plan.dp,
      [&](int member) {
        return device_id(plan, {member, rank_, shard_});
      },
      replica_);
}

void DeviceWorker::run() {
  try {
    run_windows();
  } catch (const RunStopped&) {
    // The run is stopping: leave quietly.
  } catch (const std::bad_alloc&) {
    shared_.fail("device " + std::to_string(device_) +
                 " ran out of memory; use a smaller model, batch or fewer micro-batches in flight");
  } catch (const std::exception& error) {
    shared_.fail("device " + std::to_string(device_) + ": " + error.what());
  }
  shared_.control.worker_done(device_);
}

void DeviceWorker::meet(size_t& next_point, int64_t position) {
  const auto& points = shared_.meeting_points;
  while (next_point < points.size() && points[next_point].positions[device_] == position) {
    const int step = points[next_point].step;
    shared_.rendezvous.arrive(device_, [&] { shared_.at_meeting_point(step); });
    ++next_point;
  }
}

void DeviceWorker::run_windows() {
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
        shared_.recorder.device_finished_step(window.first_step + ops[i].step);
    }
  }
  meet(next_point, shared_.program.end_positions()[device_]);
}

void DeviceWorker::record(const Op& op, double begin, int64_t bytes) {
  TraceEvent event;
  event.device = device_;
  event.op = op;
  event.t_begin = begin;
  event.t_end = shared_.clock.now();
  event.bytes = bytes;
  shared_.recorder.event(event);
}

void DeviceWorker::run_op(const TrainingWindow& window, int index) {
  const std::vector<Op>& ops = window.schedule->devices[device_];
  Op op = ops[index];
  op.step += window.first_step;
  current_ = {&ops, index, window.first_step};
  const double begin = shared_.clock.now();
  int64_t bytes = 0;
  switch (op.kind) {
    case OpKind::Forward:
      forward(op);
      break;
    case OpKind::Backward:
    case OpKind::BackwardInput:
      backward(op);
      break;
    case OpKind::BackwardWeight:
      backward_weight(op);
      break;
    case OpKind::Recompute:
      recompute(op);
      break;
    case OpKind::Update:
      update(op, ops[index].weight_version);
      break;
    case OpKind::SendActivation:
    case OpKind::SendGradient:
      bytes = send(op);
      break;
    case OpKind::RecvActivation:
    case OpKind::RecvGradient:
      bytes = receive(op);
      break;
    case OpKind::AllReduce:
      if (op.group == CommGroup::DataParallel) {
        bytes = data_parallel_all_reduce(op);
      } else if (tensor_parallel_reported_[index]) {
        return;  // ran inside the compute op before it, and was reported there
      }
      // Otherwise no all-reduce was needed: a column-parallel first layer of
      // stage 0 computes no input gradient. Reported as a zero-length op.
      break;
    case OpKind::PushGradient:
      bytes = push(op);
      break;
    case OpKind::PullWeights:
      bytes = pull(op);
      break;
    case OpKind::Offload:
    case OpKind::Reload:
      break;  // activations stay in host memory on the CPU backend
  }
  record(op, begin, bytes);
}

Tensor DeviceWorker::take(std::map<MicrobatchKey, Tensor>& from, const MicrobatchKey& key,
                          const char* what) {
  auto found = from.find(key);
  if (found == from.end())
    throw std::logic_error(std::string("schedule error: no ") + what + " for micro-batch " +
                           std::to_string(key.microbatch) + " of step " + std::to_string(key.step) +
                           " on chunk " + std::to_string(key.chunk));
  Tensor tensor = std::move(found->second);
  from.erase(found);
  return tensor;
}

void DeviceWorker::forward(Op& op) {
  StageState& stage = stages_[op.chunk];
  const MicrobatchKey key = key_of(op);
  TrainingData& data = shared_.data;
  Tensor input = op.stage == 0 ? data.inputs(op.step, replica_, op.microbatch, &allocator())
                               : take(inputs_, key, "received activation");
  op.weight_version = stage.versions->note_forward();
  forward_version_[key] = op.weight_version;

  ForwardInfo info;
  info.step = op.step;
  info.first_sample = data.first_row(replica_, op.microbatch);
  StageActivations& saved = saved_[key];
  Tensor output = stage.layers->forward(std::move(input), info, saved);

  if (op.stage == last_stage_) {
    // The loss right after F; its gradient waits for B.
    const MicrobatchTargets targets = data.targets(op.step, replica_, op.microbatch);
    LossResult loss = output_loss(data.loss(), output, targets,
                                  1.0 / static_cast<double>(data.global_batch()), true);
    if (shard_ == 0) shared_.recorder.loss(op.step, replica_, op.microbatch, loss);
    output_grads_[key] = std::move(loss.grad);
  } else {
    pass_on(op, std::move(output), true);
  }
  if (shared_.experiment.parallel.recompute) stage.layers->drop_activations(saved);
}

void DeviceWorker::backward(Op& op) {
  StageState& stage = stages_[op.chunk];
  const MicrobatchKey key = key_of(op);
  Tensor output_grad = take(output_grads_, key, "output gradient");
  op.weight_version = forward_version_.at(key);
  StageActivations& saved = saved_.at(key);
  Tensor input_grad;
  {
    VersionInUse in_use(*stage.versions, op.weight_version);
    input_grad = op.kind == OpKind::Backward
                     ? stage.layers->backward(std::move(output_grad), saved)
                     : stage.layers->backward_input(std::move(output_grad), saved);
  }
  if (op.kind == OpKind::Backward) finish_microbatch(key, stage);
  if (!input_grad.empty()) pass_on(op, std::move(input_grad), false);
}

void DeviceWorker::backward_weight(Op& op) {
  StageState& stage = stages_[op.chunk];
  const MicrobatchKey key = key_of(op);
  op.weight_version = forward_version_.at(key);
  // The weight gradient reads the kept inputs and output gradients, not the weights.
  stage.layers->backward_weight(saved_.at(key));
  finish_microbatch(key, stage);
}

void DeviceWorker::recompute(Op& op) {
  StageState& stage = stages_[op.chunk];
  const MicrobatchKey key = key_of(op);
  op.weight_version = forward_version_.at(key);
  VersionInUse in_use(*stage.versions, op.weight_version);
  stage.layers->recompute(saved_.at(key));
}

void DeviceWorker::finish_microbatch(const MicrobatchKey& key, StageState& stage) {
  saved_.erase(key);
  const auto version = forward_version_.find(key);
  stage.versions->release(version->second);
  forward_version_.erase(version);
}

void DeviceWorker::update(Op& op, int scheduled_version) {
  StageState& stage = stages_[op.chunk];
  stage.versions->before_update();
  stage.optimizer->step();
  stage.layers->zero_grad();
  stage.versions->after_update(stage.versions->current() + 1);
  op.weight_version = stage.versions->current();
  // The schedule numbers versions from its window's start.
  assert(op.weight_version == stage.window_base_version + scheduled_version);
  (void)scheduled_version;
}

void DeviceWorker::pass_on(const Op& op, Tensor tensor, bool forward) {
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

int64_t DeviceWorker::send(const Op& op) {
  const bool activation = op.kind == OpKind::SendActivation;
  const Tensor message = take(activation ? outgoing_activations_ : outgoing_gradients_, key_of(op),
                              activation ? "activation to send" : "gradient to send");
  const MessageTag tag = activation
                             ? MessageTag::activation(device_, op.stage, op.step, op.microbatch)
                             : MessageTag::gradient(device_, op.stage, op.step, op.microbatch);
  shared_.mailboxes[op.peer]->post_copy(tag, message);
  return message.bytes();
}

int64_t DeviceWorker::receive(const Op& op) {
  const bool activation = op.kind == OpKind::RecvActivation;
  const MessageTag tag = activation
                             ? MessageTag::activation(op.peer, op.stage - 1, op.step, op.microbatch)
                             : MessageTag::gradient(op.peer, op.stage + 1, op.step, op.microbatch);
  Tensor message = shared_.mailboxes[device_]->receive(tag);
  message.retag(MemoryCategory::Activations);  // consumed: from here on it is the stage's
  const int64_t bytes = message.bytes();
  (activation ? inputs_ : output_grads_)[key_of(op)] = std::move(message);
  return bytes;
}

int64_t DeviceWorker::data_parallel_all_reduce(const Op& op) {
  const std::vector<Parameter> parameters = stages_[op.chunk].layers->parameters();
  int64_t count = 0;
  for (const Parameter& parameter : parameters) count += parameter.grad->size();
  // One contiguous buffer, so the ring cuts it into n even chunks.
  Tensor flat(1, count, &allocator(), MemoryCategory::Workspace);
  int64_t offset = 0;
  for (const Parameter& parameter : parameters) {
    std::memcpy(flat.data() + offset, parameter.grad->data(),
                static_cast<size_t>(parameter.grad->size()) * sizeof(float));
    offset += parameter.grad->size();
  }
  ring_all_reduce(std::span<float>(flat.data(), static_cast<size_t>(count)), data_parallel_group_,
                  data_parallel_collectives_++);
  offset = 0;
  for (const Parameter& parameter : parameters) {
    std::memcpy(parameter.grad->data(), flat.data() + offset,
                static_cast<size_t>(parameter.grad->size()) * sizeof(float));
    offset += parameter.grad->size();
  }
  return count * static_cast<int64_t>(sizeof(float));
}

void DeviceWorker::tensor_parallel_all_reduce(Tensor& values, int layer) {
  const double begin = shared_.clock.now();
  ring_all_reduce(std::span<float>(values.data(), static_cast<size_t>(values.size())),
                  tensor_parallel_group_, tensor_parallel_collectives_++);
  // The schedule lists this all-reduce right after the compute op running it;
  // a recomputation repeats forward all-reduces the schedule does not list.
  const std::vector<Op>& ops = *current_.ops;
  for (size_t j = current_.index + 1; j < ops.size() && ops[j].kind == OpKind::AllReduce &&
                                      ops[j].group == CommGroup::TensorParallel;
       ++j) {
    if (ops[j].layer != layer || tensor_parallel_reported_[j]) continue;
    tensor_parallel_reported_[j] = 1;
    Op op = ops[j];
    op.step += current_.first_step;
    record(op, begin, values.bytes());
    return;
  }
}

int64_t DeviceWorker::push(const Op& op) {
  StageState& stage = stages_[op.chunk];
  const std::vector<Parameter> parameters = stage.layers->parameters();
  ParameterServer& server = *shared_.servers[op.stage * shared_.experiment.parallel.tp + shard_];
  server.push(op.step, replica_, parameters);
  stage.layers->zero_grad();
  return parameter_bytes(parameters);
}

int64_t DeviceWorker::pull(Op& op) {
  StageState& stage = stages_[op.chunk];
  const std::vector<Parameter> parameters = stage.layers->parameters();
  ParameterServer& server = *shared_.servers[op.stage * shared_.experiment.parallel.tp + shard_];
  // Bounded staleness: the version holding every gradient of steps 0 .. t - staleness.
  const int version = std::max(0, op.step + 1 - shared_.experiment.parallel.staleness);
  stage.versions->before_update();
  server.pull(version, replica_, device_, parameters);
  stage.versions->after_update(version);
  op.weight_version = version;
  return parameter_bytes(parameters);
}

void DeviceWorker::drop_in_flight() {
  saved_.clear();
  forward_version_.clear();
  inputs_.clear();
  output_grads_.clear();
  outgoing_activations_.clear();
  outgoing_gradients_.clear();
  for (StageState& stage : stages_) stage.versions->clear();
}

}  // namespace pipelab
