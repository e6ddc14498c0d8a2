// The definitions of DeviceWorker<Backend> (device_worker.h). Included only by
// the file that instantiates the loop for a backend (cpu_executor.cpp, and
// gpu/executor/cuda_executor.cpp), so other users compile the declarations only.
#pragma once

#include <algorithm>
#include <cassert>
#include <iterator>
#include <new>
#include <stdexcept>
#include <utility>

#include "core/runtime/device_worker.h"
#include "core/comm/message_tag.h"

namespace pipelab {
namespace runtime_detail {

template <typename ParameterT>
int64_t parameter_bytes(const std::vector<ParameterT>& parameters) {
  int64_t bytes = 0;
  for (const ParameterT& parameter : parameters) bytes += parameter.value->bytes();
  return bytes;
}

// Runs a backward (or recompute) on an older weight version and puts the
// current one back however the scope ends.
template <typename Stash>
class VersionInUse {
 public:
  VersionInUse(Stash& stash, int version) : stash_(stash) { stash_.use(version); }
  ~VersionInUse() { stash_.restore_current(); }
  VersionInUse(const VersionInUse&) = delete;
  VersionInUse& operator=(const VersionInUse&) = delete;

 private:
  Stash& stash_;
};

}  // namespace runtime_detail

template <typename Backend>
DeviceWorker<Backend>::DeviceWorker(WorkerShared& shared, Devices& devices, int device)
    : shared_(shared),
      place_(worker_place(shared.experiment, device)),
      last_stage_(shared.experiment.parallel.stages() - 1),
      reads_newest_weights_(backward_reads_newest_weights(shared.experiment.parallel.schedule)),
      backend_(devices, shared, place_) {
  const Experiment& experiment = shared_.experiment;
  const ParallelPlan& plan = experiment.parallel;
  const bool async_data_parallel = plan.update == UpdateMode::Async && plan.dp > 1;

  for (int chunk = 0; chunk < plan.chunks; ++chunk) {
    StageState state;
    state.stage = plan.layout().stage_of(place_.rank, chunk);
    typename Stack::TensorParallelSetup tensor_parallel;
    tensor_parallel.degree = plan.tp;
    tensor_parallel.shard = place_.shard;
    if (plan.tp > 1) {
      tensor_parallel.roles = shared_.tp_roles;
      tensor_parallel.all_reduce = [this](Tensor& values, int layer, bool) {
        tensor_parallel_collective(OpKind::AllReduce, values, layer);
      };
      tensor_parallel.sequence_parallel = plan.sequence_parallel;
      tensor_parallel.sequence_collective = [this](TensorParallelCollective collective, Tensor& values,
                                                   int layer, bool) {
        tensor_parallel_collective(collective == TensorParallelCollective::AllGather ? OpKind::AllGather
                                                                                     : OpKind::ReduceScatter,
                                   values, layer);
      };
    }
    tensor_parallel.cp = plan.cp;
    tensor_parallel.context = place_.context;
    if (plan.cp > 1)
      tensor_parallel.context_collective = [this](TensorParallelCollective collective,
                                                  Tensor& values, int layer, bool,
                                                  const SliceArrival& arrived) {
        context_parallel_collective(collective == TensorParallelCollective::AllGather, values,
                                    layer, arrived);
      };
    // Zero 3 slices each layer as soon as it is built (make_unit_shards).
    const bool units = plan.zero >= 3 && plan.data_parallel_size() > 1;
    typename Stack::BuiltLayer built;
    if (units) built = [this, &state](Stack& layers, int k) { make_unit_shards(state, layers, k); };
    state.layers = backend_.make_stack(shared_.stage_ranges[state.stage], tensor_parallel, built);
    if (plan.dp > 1)
      state.layers->connect_batch_statistics(
          [this](std::vector<double>& values, int layer) { batch_statistics_all_reduce(values, layer); });
    state.layers->connect_experts(
        [this](int layer, const ForwardInfo&, const MoeRouting& routing, double aux_loss) {
          report_expert_load(layer, routing, aux_loss);
        },
        static_cast<double>(experiment.training.batch_size * sequence_length(experiment.model)),
        plan.ep == 1 ? typename Stack::ExpertAllToAll{}
                     : [this](Tensor& values, int layer, bool) { expert_all_to_all(values, layer); });
    // Optimizer offloading steps a host optimizer instead (host_optimizer),
    // ZeRO one per shard of the state (make_zero_shards; zero 3's are made).
    if (units) {
      const int index = chunk;  // stages_[chunk] once pushed below
      state.layers->connect_weight_units({[this, index](int k) { acquire_unit(index, k); },
                                          [this, index](int k) { release_unit(index, k); }});
    } else if (plan.zero > 0 && plan.data_parallel_size() > 1) {
      make_zero_shards(state);
    } else if (!async_data_parallel && plan.offload != OffloadMode::Optimizer)
      state.optimizer = backend_.make_optimizer(optimizer_settings(experiment.training.optimizer),
                                                state.layers->parameters());
    state.versions = std::make_unique<Stash>(state.layers->parameters());
    const PipeMareSpec& pipemare = experiment.training.pipemare;
    if (reads_newest_weights_ && pipemare.discrepancy_correction)
      state.velocity = std::make_unique<Velocity>(state.layers->parameters(), pipemare.velocity_decay);
    stages_.push_back(std::move(state));
  }
}

template <typename Backend>
DeviceWorker<Backend>::~DeviceWorker() {
  // In-flight tensors go before the stages and the backend they live on.
  drop_in_flight();
}

template <typename Backend>
void DeviceWorker<Backend>::run() {
  try {
    backend_.enter_thread();
    run_windows();
    backend_.report_all();
  } catch (const RunStopped&) {
    // The run is stopping: leave quietly.
  } catch (const std::bad_alloc&) {
    shared_.fail("device " + std::to_string(place_.device) +
                 " ran out of host memory; use a smaller model, batch or fewer micro-batches in "
                 "flight" +
                 during_op());
  } catch (const std::exception& error) {
    shared_.fail(backend_.failure_message(error) + during_op());
  }
  backend_.leave_thread();
  shared_.control.worker_done(place_.device);
}

template <typename Backend>
auto DeviceWorker<Backend>::meeting_from(int step) const -> Meeting {
  const int next = shared_.evaluated_steps.first_from(step);
  if (next >= shared_.evaluated_steps.total_steps) return {};
  return {next, shared_.program.positions_after_step(next)[place_.device]};
}

template <typename Backend>
std::string DeviceWorker<Backend>::during_op() const {
  if (!current_.ops) return "";
  Op op = (*current_.ops)[current_.index];
  op.step += current_.first_step;
  return " (during " + op_label(op) + ")";
}

template <typename Backend>
void DeviceWorker<Backend>::meet(Meeting& next, int64_t position) {
  while (next.position == position) {
    const int step = next.step;
    // Zero 3: the evaluation reads whole weights; every replica gathers them.
    const bool sharded_weights = !units_held_ && shared_.experiment.parallel.zero >= 3;
    if (sharded_weights) hold_units(true);
    shared_.rendezvous.arrive(place_.device, [&] { shared_.at_meeting_point(step); });
    if (sharded_weights) hold_units(false);
    next = meeting_from(step + 1);
  }
}

template <typename Backend>
void DeviceWorker<Backend>::run_windows() {
  Meeting next_meeting = meeting_from(0);
  const int device = place_.device;
  for (int w = 0; w < shared_.program.window_count(); ++w) {
    const TrainingWindow window = shared_.program.window(w);
    const std::vector<Op>& ops = window.schedule->devices[device];
    const std::vector<int>& last_op = window.boundaries->last_op_of_step()[device];
    for (StageState& stage : stages_) stage.window_base_version = stage.versions->current();
    tensor_parallel_reported_.assign(ops.size(), 0);
    for (int s = 0; s < window.steps; ++s)  // steps this device has nothing to do in
      if (last_op[s] < 0) shared_.recorder.device_finished_step(window.first_step + s);

    for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
      const int64_t position = window.first_position[device] + i;
      meet(next_meeting, position);
      if (!shared_.control.wait_for_turn(device, position)) return;
      run_op(window, i);
      if (last_op[ops[i].step] == i) {
        // Every op and loss of the step is reported before the step is.
        backend_.report_all();
        shared_.recorder.device_finished_step(window.first_step + ops[i].step);
      }
    }
  }
  // Zero 3: what reads the weights after the run (the last evaluation, a
  // saved model) finds them whole.
  if (shared_.experiment.parallel.zero >= 3) hold_units(true);
  meet(next_meeting, shared_.program.end_positions()[device]);
}

template <typename Backend>
template <typename Body>
void DeviceWorker<Backend>::timed(Op& op, Body&& body) {
  backend_.begin(op);
  const int64_t bytes = body();
  backend_.end(op, bytes);
}

template <typename Backend>
void DeviceWorker<Backend>::run_op(const TrainingWindow& window, int index) {
  const std::vector<Op>& ops = window.schedule->devices[place_.device];
  Op op = ops[index];
  op.step += window.first_step;
  current_ = {&ops, index, window.first_step};
  const auto none = [] { return int64_t{0}; };
  switch (op.kind) {
    case OpKind::Forward:
      timed(op, [&] {
        begin_unit_op(op, index);
        forward(op);
        end_unit_op();
        return int64_t{0};
      });
      break;
    case OpKind::Backward:
    case OpKind::BackwardInput:
      renew_gradients(stages_[op.chunk]);
      timed(op, [&] {
        begin_unit_op(op, index);
        backward(op);
        end_unit_op();
        return int64_t{0};
      });
      break;
    case OpKind::BackwardWeight:
      renew_gradients(stages_[op.chunk]);
      timed(op, [&] {
        begin_unit_op(op, index);
        backward_weight(op);
        end_unit_op();
        return int64_t{0};
      });
      break;
    case OpKind::Recompute:
      timed(op, [&] { recompute(op); return int64_t{0}; });
      break;
    case OpKind::Update:
      // The version U writes, known before it runs (it names the op's range).
      op.weight_version = stages_[op.chunk].versions->current() + 1;
      timed(op, [&] { update(op, ops[index].weight_version); return int64_t{0}; });
      break;
    case OpKind::SendActivation:
    case OpKind::SendGradient:
      send(op);  // timed by the backend, on the lane that moves the data
      break;
    case OpKind::RecvActivation:
    case OpKind::RecvGradient:
      receive(op);  // timed by the backend
      break;
    case OpKind::AllReduce:
      if (op.group == CommGroup::DataParallel && op.layer >= 0) {
        // Synced batch norm's statistics: run inside the compute op before it.
        if (!tensor_parallel_reported_[index]) timed(op, none);
      } else if (op.group == CommGroup::DataParallel)
        timed(op, [&] { return data_parallel_all_reduce(op); });
      else if (op.microbatch < 0)  // the step's, before the update (lowering.cpp)
        timed(op, [&] { return sequence_partial_all_reduce(op); });
      else if (!tensor_parallel_reported_[index])
        // No all-reduce was needed (a column-parallel first layer of stage 0
        // computes no input gradient): reported as a zero-length op.
        timed(op, none);
      // Otherwise it ran inside the compute op before it, and was reported there.
      break;
    case OpKind::PushGradient:
      timed(op, [&] { return push(op); });
      break;
    case OpKind::PullWeights:
      // Bounded staleness: the version holding every gradient of steps 0 .. t - staleness.
      op.weight_version = std::max(0, op.step + 1 - shared_.experiment.parallel.staleness);
      timed(op, [&] { return pull(op); });
      break;
    case OpKind::Offload:
    case OpKind::Reload:
      timed(op, [&] { return host_transfer(op); });
      break;
    case OpKind::ReduceScatter:
    case OpKind::AllGather:
      if (op.group == CommGroup::DataParallel && op.kind == OpKind::AllGather &&
          op.microbatch >= 0) {
        // Zero 3's, of the weights an F, B or BI reads: that op gathers them
        // layer by layer and reports them as this one.
        stages_[op.chunk].listed_gathers.push_back(op);
        break;
      }
      if (op.group == CommGroup::DataParallel && !tensor_parallel_reported_[index]) {
        // ZeRO's, of the stage's gradients or weights (zero 3's scatters ran,
        // and were reported, inside the B or BW before them).
        timed(op, [&] { return op.kind == OpKind::ReduceScatter ? reduce_scatter_gradients(op) : gather_weights(op); });
        break;
      }
      if (op.group == CommGroup::DataParallel) break;
      [[fallthrough]];
    case OpKind::AllToAll:
      // Run (and reported) inside the compute op before it, as the
      // tensor-parallel all-reduces are (a moe layer's all-to-alls too); one
      // the layer did not ask for is a zero-length op.
      if (!tensor_parallel_reported_[index]) timed(op, none);
      break;
  }
  backend_.op_done(op);
}

template <typename Backend>
auto DeviceWorker<Backend>::take(std::map<MicrobatchKey, Tensor>& from, const MicrobatchKey& key,
                                 const char* what) -> Tensor {
  auto found = from.find(key);
  if (found == from.end())
    throw std::logic_error(std::string("schedule error: no ") + what + " for micro-batch " +
                           std::to_string(key.microbatch) + " of step " + std::to_string(key.step) +
                           " on chunk " + std::to_string(key.chunk));
  Tensor tensor = std::move(found->second);
  from.erase(found);
  return tensor;
}

template <typename Backend>
void DeviceWorker<Backend>::forward(Op& op) {
  StageState& stage = stages_[op.chunk];
  const MicrobatchKey key = key_of(op);
  Tensor input =
      op.stage == 0 ? backend_.stage_input(op) : take(inputs_, key, "received activation");
  // Under pipemare no backward needs this version back, so nothing is stashed.
  op.weight_version = reads_newest_weights_ ? stage.versions->current() : stage.versions->note_forward();
  forward_version_[key] = op.weight_version;

  ForwardInfo info;
  info.step = op.step;
  info.first_sample = shared_.data.first_row(place_.replica, op.microbatch);
  Activations& saved = saved_[key];
  Tensor output = stage.layers->forward(std::move(input), info, saved);

  if (op.stage == last_stage_)
    // The loss right after F; its gradient waits for B. The output dies here.
    output_grads_[key] = backend_.loss_gradient(op, output, [this](Tensor& values) {
      // The vocabulary-parallel loss's all-reduces, listed after the output layer's forward.
      tensor_parallel_collective(OpKind::AllReduce, values, shared_.stage_ranges[last_stage_].end - 1);
    });
  else
    pass_on(op, std::move(output), true);
  if (shared_.experiment.parallel.recompute) stage.layers->drop_activations(saved);
}

template <typename Backend>
void DeviceWorker<Backend>::backward(Op& op) {
  StageState& stage = stages_[op.chunk];
  const MicrobatchKey key = key_of(op);
  Tensor output_grad = take(output_grads_, key, "output gradient");
  set_backward_version(op, stage, key);
  stage.gradient_delay = op.weight_delay;
  Activations& saved = saved_.at(key);
  Tensor input_grad;
  {
    runtime_detail::VersionInUse<Stash> in_use(*stage.versions, op.weight_version);
    ExtrapolatedWeights<Parameter> extrapolated(stage.velocity.get(), op.weight_delay);
    input_grad = op.kind == OpKind::Backward
                     ? stage.layers->backward(std::move(output_grad), saved)
                     : stage.layers->backward_input(std::move(output_grad), saved);
  }
  if (op.kind == OpKind::Backward) finish_microbatch(key, stage);
  if (!input_grad.empty()) pass_on(op, std::move(input_grad), false);
}

template <typename Backend>
void DeviceWorker<Backend>::backward_weight(Op& op) {
  StageState& stage = stages_[op.chunk];
  const MicrobatchKey key = key_of(op);
  set_backward_version(op, stage, key);
  // The weight gradient reads the kept inputs and output gradients, not the weights.
  stage.layers->backward_weight(saved_.at(key));
  finish_microbatch(key, stage);
}

template <typename Backend>
void DeviceWorker<Backend>::recompute(Op& op) {
  StageState& stage = stages_[op.chunk];
  const MicrobatchKey key = key_of(op);
  set_backward_version(op, stage, key);
  runtime_detail::VersionInUse<Stash> in_use(*stage.versions, op.weight_version);
  ExtrapolatedWeights<Parameter> extrapolated(stage.velocity.get(), op.weight_delay);
  stage.layers->recompute(saved_.at(key));
}

template <typename Backend>
void DeviceWorker<Backend>::set_backward_version(Op& op, const StageState& stage,
                                                 const MicrobatchKey& key) const {
  const int forward_version = forward_version_.at(key);
  op.weight_version = reads_newest_weights_ ? stage.versions->current() : forward_version;
  op.weight_delay = op.weight_version - forward_version;
}

template <typename Backend>
int64_t DeviceWorker<Backend>::host_transfer(const Op& op) {
  if (op.microbatch < 0) {  // optimizer offloading: the gradients go down, the new weights come up
    if (!stages_[op.chunk].shards.empty()) return move_shards(stages_[op.chunk], op.kind);
    Stack& layers = *stages_[op.chunk].layers;
    if (op.kind == OpKind::Offload)
      backend_.copy_to_host(layers, op.chunk, ParameterPart::Gradients);
    else
      backend_.copy_values_to_device(layers, op.chunk);
    return runtime_detail::parameter_bytes(layers.parameters());
  }
  const auto saved = saved_.find(key_of(op));
  if (saved == saved_.end())
    throw std::logic_error(std::string("schedule error: no activations to ") +
                           (op.kind == OpKind::Offload ? "offload" : "reload") + " for " + op_label(op));
  Stack& stack = *stages_[op.chunk].layers;
  if (op.kind == OpKind::Offload)
    return stack.move_activations(saved->second, [this](Tensor& tensor) { return backend_.offload_tensor(tensor); });
  return stack.move_activations(saved->second, [this](Tensor& tensor) { return backend_.reload_tensor(tensor); });
}

template <typename Backend>
void DeviceWorker<Backend>::finish_microbatch(const MicrobatchKey& key, StageState& stage) {
  saved_.erase(key);
  const auto version = forward_version_.find(key);
  if (!reads_newest_weights_) stage.versions->release(version->second);
  forward_version_.erase(version);
}

template <typename Backend>
void DeviceWorker<Backend>::update(Op& op, int scheduled_version) {
  StageState& stage = stages_[op.chunk];
  const PipeMareSpec& pipemare = shared_.experiment.training.pipemare;
  if (reads_newest_weights_ && pipemare.lr_rescheduling)
    stage.optimizer->set_learning_rate(pipemare_learning_rate(shared_.experiment.training.optimizer.lr,
                                                              stage.gradient_delay, stage.versions->current(),
                                                              pipemare.lr_warmup_updates));
  stage.versions->before_update();
  if (stage.velocity) stage.velocity->before_update();
  if (!stage.shards.empty())
    update_shards(stage);  // the AllGather after U hands out the new weights
  else if (stage.optimizer)
    stage.optimizer->step();
  else
    host_optimizer(op.chunk).step();  // on the host view, which the RELOAD after U copies back
  if (stage.velocity) stage.velocity->after_update();
  stage.layers->zero_grad();
  stage.versions->after_update(stage.versions->current() + 1);
  op.weight_version = stage.versions->current();
  // The schedule numbers versions from its window's start.
  assert(op.weight_version == stage.window_base_version + scheduled_version);
  (void)scheduled_version;
}

template <typename Backend>
void DeviceWorker<Backend>::pass_on(const Op& op, Tensor tensor, bool forward) {
  const Schedule& schedule = shared_.program.schedule();
  const int to_stage = op.stage + (forward ? 1 : -1);
  const int to_device =
      schedule.device_of_stage(to_stage, place_.replica, place_.shard, place_.context);
  if (to_device == place_.device) {
    const MicrobatchKey to_key{to_stage / schedule.pp, op.step, op.microbatch};
    (forward ? inputs_ : output_grads_)[to_key] = std::move(tensor);
  } else {
    (forward ? outgoing_activations_ : outgoing_gradients_)[key_of(op)] = std::move(tensor);
  }
}

template <typename Backend>
int64_t DeviceWorker<Backend>::send(const Op& op) {
  const bool activation = op.kind == OpKind::SendActivation;
  Tensor message = take(activation ? outgoing_activations_ : outgoing_gradients_, key_of(op),
                        activation ? "activation to send" : "gradient to send");
  return backend_.send(op, message_tag(op), std::move(message));
}

template <typename Backend>
int64_t DeviceWorker<Backend>::receive(const Op& op) {
  const bool activation = op.kind == OpKind::RecvActivation;
  Tensor message = backend_.receive(op, message_tag(op));
  message.retag(MemoryCategory::Activations);  // consumed: from here on it is the stage's
  const int64_t bytes = message.bytes();
  (activation ? inputs_ : output_grads_)[key_of(op)] = std::move(message);
  return bytes;
}

template <typename Backend>
auto DeviceWorker<Backend>::dense_parameters(Stack& layers, std::vector<Parameter> parameters,
                                             std::vector<Parameter>* experts)
    -> std::vector<Parameter> {
  if (shared_.experiment.parallel.ep == 1) return parameters;
  const std::vector<Tensor*> expert_grads = layers.expert_grads();
  const auto is_expert = [&](const Parameter& parameter) {
    return std::find(expert_grads.begin(), expert_grads.end(), parameter.grad) != expert_grads.end();
  };
  std::copy_if(parameters.begin(), parameters.end(), std::back_inserter(*experts), is_expert);
  parameters.erase(std::remove_if(parameters.begin(), parameters.end(), is_expert), parameters.end());
  return parameters;
}

template <typename Backend>
int64_t DeviceWorker<Backend>::data_parallel_all_reduce(const Op& op) {
  // Under expert parallelism the experts' gradients are summed over the
  // replicas holding the same experts only (every ep-th one).
  std::vector<Parameter> experts;
  StageState& stage = stages_[op.chunk];
  std::vector<Parameter> parameters =
      dense_parameters(*stage.layers, stage.layers->parameters(), &experts);
  // One contiguous buffer: one collective instead of one per parameter (and
  // a ring cuts it into even chunks).
  Tensor flat = backend_.gather_gradients(parameters);
  backend_.data_parallel_all_reduce(flat);
  backend_.scatter_gradients(flat, parameters);
  int64_t bytes = flat.bytes();
  if (!experts.empty()) {
    Tensor expert_flat = backend_.gather_gradients(experts);
    backend_.expert_data_parallel_all_reduce(expert_flat);
    backend_.scatter_gradients(expert_flat, experts);
    bytes += expert_flat.bytes();
  }
  return bytes;
}

template <typename Backend>
int64_t DeviceWorker<Backend>::sequence_partial_all_reduce(const Op& op) {
  // Under zero 2 the layers hold no gradients by now: the partial sums are in
  // each device's slice (summed over the replicas already; the two sums commute).
  if (shared_.experiment.parallel.zero >= 2)
    return sequence_partial_slices_all_reduce(stages_[op.chunk]);
  std::vector<Parameter> partial;
  for (Tensor* grad : stages_[op.chunk].layers->sequence_partial_grads()) partial.push_back({grad, grad});
  // One contiguous buffer, one collective, as for the data-parallel all-reduce.
  Tensor flat = backend_.gather_gradients(partial);
  backend_.tensor_parallel_all_reduce(flat);
  backend_.scatter_gradients(flat, partial);
  return flat.bytes();
}

template <typename Backend>
void DeviceWorker<Backend>::tensor_parallel_collective(OpKind kind, Tensor& values, int layer) {
  inner_collective(kind, CommGroup::TensorParallel, layer, [&] {
    if (kind == OpKind::AllReduce)
      backend_.tensor_parallel_all_reduce(values);
    else if (kind == OpKind::ReduceScatter)
      backend_.tensor_parallel_reduce_scatter(values);
    else
      backend_.tensor_parallel_all_gather(values);
    return values.bytes();
  });
}

template <typename Backend>
void DeviceWorker<Backend>::context_parallel_collective(bool gather, Tensor& values, int layer,
                                                        const SliceArrival& arrived) {
  // A gather's span includes the work `arrived` does on each slice as it
  // lands: the ring's steps overlap the block's attention (ring attention).
  inner_collective(gather ? OpKind::AllGather : OpKind::ReduceScatter, CommGroup::ContextParallel,
                   layer, [&] {
                     if (gather)
                       backend_.context_parallel_all_gather(values, arrived);
                     else
                       backend_.context_parallel_reduce_scatter(values);
                     return values.bytes();
                   });
}

template <typename Backend>
void DeviceWorker<Backend>::batch_statistics_all_reduce(std::vector<double>& values, int layer) {
  inner_collective(OpKind::AllReduce, CommGroup::DataParallel, layer, [&] {
    // Sent as float32, as every collective is; the sums are of one micro-batch's values.
    std::vector<float> sums(values.begin(), values.end());
    backend_.data_parallel_all_reduce(sums);
    values.assign(sums.begin(), sums.end());
    return static_cast<int64_t>(sums.size() * sizeof(float));
  });
}

template <typename Backend>
void DeviceWorker<Backend>::expert_all_to_all(Tensor& values, int layer) {
  inner_collective(OpKind::AllToAll, CommGroup::ExpertParallel, layer, [&] {
    backend_.expert_all_to_all(values);
    return values.bytes();
  });
}

template <typename Backend>
void DeviceWorker<Backend>::report_expert_load(int layer, const MoeRouting& routing, double aux_loss) {
  if (place_.shard != 0 || !current_.ops) return;  // every tensor-parallel shard routes the same
  const Op& op = (*current_.ops)[current_.index];
  shared_.recorder.expert_load(op.step + current_.first_step, place_.replica, op.microbatch, layer,
                               {routing.routed, routing.dropped, aux_loss});
}

template <typename Backend>
template <typename Run>
void DeviceWorker<Backend>::inner_collective(OpKind kind, CommGroup group, int layer, Run&& run) {
  // The schedule lists this collective among the ones right after the
  // compute op running it; a recomputation repeats forward collectives the
  // schedule does not list.
  const std::vector<Op>& ops = *current_.ops;
  const Op* listed = nullptr;
  for (size_t j = current_.index + 1; j < ops.size() && is_collective(ops[j].kind); ++j) {
    if (ops[j].kind != kind || ops[j].group != group || ops[j].layer != layer || tensor_parallel_reported_[j])
      continue;
    tensor_parallel_reported_[j] = 1;
    listed = &ops[j];
    break;
  }
  if (!listed) {
    run();
    return;
  }
  Op op = *listed;
  op.step += current_.first_step;
  timed(op, run);
}

template <typename Backend>
WeightServer& DeviceWorker<Backend>::server_of(const Op& op) {
  return *shared_.servers[op.stage * shared_.experiment.parallel.tp + place_.shard];
}

template <typename Backend>
Sequential& DeviceWorker<Backend>::host_weights(int chunk) {
  Sequential& host = backend_.host_stage(stage(chunk), chunk);
  backend_.copy_to_host(stage(chunk), chunk, ParameterPart::Values);
  return host;
}

template <typename Backend>
pipelab::Optimizer& DeviceWorker<Backend>::host_optimizer(int chunk) {
  StageState& stage = stages_[chunk];
  if (!stage.host_optimizer) {
    Sequential& host = backend_.host_stage(*stage.layers, chunk);
    stage.host_optimizer = pipelab::make_optimizer(optimizer_settings(shared_.experiment.training.optimizer),
                                                   host.parameters(), MemoryCategory::Host);
  }
  return *stage.host_optimizer;
}

template <typename Backend>
int64_t DeviceWorker<Backend>::push(const Op& op) {
  Stack& layers = *stages_[op.chunk].layers;
  Sequential& host = backend_.host_stage(layers, op.chunk);
  backend_.copy_to_host(layers, op.chunk, ParameterPart::Gradients);
  server_of(op).push(op.step, place_.replica, place_.device, host.parameters());
  layers.zero_grad();
  return runtime_detail::parameter_bytes(layers.parameters());
}

template <typename Backend>
int64_t DeviceWorker<Backend>::pull(Op& op) {
  StageState& stage = stages_[op.chunk];
  Sequential& host = backend_.host_stage(*stage.layers, op.chunk);
  stage.versions->before_update();
  server_of(op).pull(op.weight_version, place_.replica, place_.device, host.parameters());
  backend_.copy_values_to_device(*stage.layers, op.chunk);
  stage.versions->after_update(op.weight_version);
  return runtime_detail::parameter_bytes(stage.layers->parameters());
}

template <typename Backend>
void DeviceWorker<Backend>::drop_in_flight() {
  saved_.clear();
  forward_version_.clear();
  inputs_.clear();
  output_grads_.clear();
  outgoing_activations_.clear();
  outgoing_gradients_.clear();
  backend_.drop_in_flight();
  for (StageState& stage : stages_) stage.versions->clear();
}

}  // namespace pipelab

#include "core/runtime/device_worker_zero.h"  // IWYU pragma: export
