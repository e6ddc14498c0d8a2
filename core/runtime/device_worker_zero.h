// The ZeRO members of DeviceWorker<Backend> (device_worker.h's table): the
// shards of a stage's optimizer state, gradients and (zero 3) weights, and
// the collectives that move them. Included by device_worker_impl.h only.
#pragma once

#include <algorithm>
#include <array>
#include <memory>
#include <utility>
#include <vector>

#include "core/runtime/device_worker.h"

namespace pipelab {

template <typename Backend>
void DeviceWorker<Backend>::make_zero_shards(StageState& stage) {
  const ParallelPlan& plan = shared_.experiment.parallel;
  // Which gradients sequence parallelism leaves partial, known by their
  // tensors while they exist (a released block's list leaves them out).
  const std::vector<Tensor*> partial = stage.layers->sequence_partial_grads();
  // The stage's flattened parameters as one: the dense ones, then the experts'.
  // (Zero 3 makes its shards layer by layer as the stage is built: make_unit_shards.)
  Stack& layers = *stage.layers;
  std::vector<Parameter> experts;
  std::vector<Parameter> dense = dense_parameters(layers, layers.parameters(), &experts);
  add_zero_shard(stage, std::move(dense), false, partial, -1);
  add_zero_shard(stage, std::move(experts), true, partial, -1);
  // Zero 2 holds no whole gradients until the first backward.
  if (plan.zero >= 2) release_gradients(stage);
}

template <typename Backend>
void DeviceWorker<Backend>::make_unit_shards(StageState& stage, Stack& layers, int k) {
  // Each layer is a unit (FSDP's), whose whole weights then exist only while
  // a use has gathered them, and its whole gradients from its backward to
  // their scatter (acquire_unit, release_unit).
  if (static_cast<int>(stage.unit_shards.size()) <= k) stage.unit_shards.resize(k + 1);
  const std::vector<Tensor*> partial = layers.layer_sequence_partial_grads(k);
  std::vector<Parameter> experts;
  std::vector<Parameter> dense = dense_parameters(layers, layers.layer_parameters(k), &experts);
  add_zero_shard(stage, std::move(dense), false, partial, k);
  add_zero_shard(stage, std::move(experts), true, partial, k);
  for (int index : stage.unit_shards[k]) {
    ZeroShard& shard = *stage.shards[index];
    for (const Parameter& parameter : shard.parameters) parameter.grad->reset();
    free_gathered(shard);
  }
}

template <typename Backend>
void DeviceWorker<Backend>::add_zero_shard(StageState& stage, std::vector<Parameter> parameters,
                                           bool experts,
                                           const std::vector<Tensor*>& sequence_partial,
                                           int layer) {
  if (parameters.empty()) return;
  const ParallelPlan& plan = shared_.experiment.parallel;
  auto shard = std::make_unique<ZeroShard>();
  shard->experts = experts;
  // The dense group spans the replicas and their context ranks.
  shard->members = experts ? plan.dp / plan.ep : plan.data_parallel_size();
  shard->rank = experts ? place_.replica / plan.ep : place_.data_parallel_rank(plan.cp);
  int64_t count = 0;
  for (const Parameter& parameter : parameters) count += parameter.value->size();
  shard->shard = std::max<int64_t>(1, (count + shard->members - 1) / shard->members);
  shard->parameters = std::move(parameters);
  for (const Parameter& parameter : shard->parameters) {
    shard->sequence_partial.push_back(std::find(sequence_partial.begin(), sequence_partial.end(),
                                                parameter.grad) != sequence_partial.end());
    shard->weight_shapes.push_back({parameter.value->rows(), parameter.value->cols()});
  }
  // Zero 1 keeps whole gradients in the layers and the slice's sum here as
  // a copy; zero 2 and 3 keep only the slice, the stage's gradients.
  shard->gradients = backend_.zeros(
      1, shard->shard, plan.zero >= 2 ? MemoryCategory::Gradients : MemoryCategory::Workspace);
  // Zero 3's slice of the weights is the device's only copy of them, kept;
  // zero 1 and 2 hold the slice's weights only from U to the gather after it.
  const MemoryCategory slice_category =
      plan.zero >= 3 ? MemoryCategory::Weights : MemoryCategory::Workspace;
  const OptimizerSettings settings = optimizer_settings(shared_.experiment.training.optimizer);
  if (plan.offload == OffloadMode::Optimizer) {
    // ZeRO-Offload: the slice's master weights live on the host from the start.
    shard->host_values =
        pipelab::Tensor(1, shard->shard, backend_.host_allocator(), MemoryCategory::Host);
    shard->host_gradients =
        pipelab::Tensor(1, shard->shard, backend_.host_allocator(), MemoryCategory::Host);
    copy_out_slice(*shard, slice_category);
    backend_.download(shard->values, shard->host_values);
    shard->host_optimizer = pipelab::make_optimizer(
        settings, {pipelab::Parameter{&shard->host_values, &shard->host_gradients}},
        MemoryCategory::Host);
  } else {
    // The optimizer sizes its state from the slice's weights.
    shard->values = backend_.zeros(1, shard->shard, slice_category);
    shard->optimizer =
        backend_.make_optimizer(settings, {Parameter{&shard->values, &shard->gradients}});
    if (plan.zero >= 3) copy_out_slice(*shard, slice_category);
  }
  if (plan.zero < 3) shard->values.reset();
  if (layer >= 0) stage.unit_shards[layer].push_back(static_cast<int>(stage.shards.size()));
  stage.shards.push_back(std::move(shard));
}

template <typename Backend>
int64_t DeviceWorker<Backend>::sequence_partial_slices_all_reduce(StageState& stage) {
  int64_t bytes = 0;
  for (const std::unique_ptr<ZeroShard>& shard : stage.shards) {
    // [from, until) of the slice's values: the parts of partial gradients in
    // it. The tensor-parallel shards of a replica flatten their stages alike
    // and hold the same slice, so the parts line up across the group.
    std::vector<std::pair<int64_t, int64_t>> parts;
    int64_t offset = 0, count = 0;
    for (size_t p = 0; p < shard->parameters.size(); ++p) {
      const int64_t size = shard->size_of(p);  // zero 3 may have released the values
      const int64_t from = std::max(offset, shard->begin());
      const int64_t until = std::min(offset + size, shard->begin() + shard->shard);
      if (from < until && shard->sequence_partial[p]) {
        parts.emplace_back(from - shard->begin(), until - shard->begin());
        count += until - from;
      }
      offset += size;
    }
    if (count == 0) continue;
    Tensor flat = backend_.zeros(1, count, MemoryCategory::CommBuffers);
    int64_t at = 0;
    for (const auto& [from, until] : parts) {
      backend_.copy_values(shard->gradients, from, flat, at, until - from);
      at += until - from;
    }
    backend_.tensor_parallel_all_reduce(flat);
    at = 0;
    for (const auto& [from, until] : parts) {
      backend_.copy_values(flat, at, shard->gradients, from, until - from);
      at += until - from;
    }
    bytes += flat.bytes();
  }
  return bytes;
}

template <typename Backend>
int64_t DeviceWorker<Backend>::reduce_scatter_gradients(const Op& op) {
  StageState& stage = stages_[op.chunk];
  const bool accumulate = shared_.experiment.parallel.zero >= 2;  // one scatter per backward
  int64_t bytes = 0;
  for (const std::unique_ptr<ZeroShard>& shard : stage.shards) {
    Tensor flat = backend_.gather_gradients(shard->parameters, shard->padded());
    backend_.data_parallel_reduce_scatter(flat, shard->experts);
    if (accumulate)
      backend_.add_values(flat, shard->begin(), shard->gradients, 0, shard->shard);
    else
      backend_.copy_values(flat, shard->begin(), shard->gradients, 0, shard->shard);
    bytes += flat.bytes();
  }
  if (accumulate) release_gradients(stage);
  return bytes;
}

template <typename Backend>
void DeviceWorker<Backend>::copy_out_slice(ZeroShard& shard, MemoryCategory category) {
  // Each parameter's part of [begin, begin + shard) of the flattened values.
  shard.values = backend_.zeros(1, shard.shard, category);
  int64_t offset = 0;
  for (const Parameter& parameter : shard.parameters) {
    const int64_t size = parameter.value->size();
    const int64_t from = std::max(offset, shard.begin());
    const int64_t until = std::min(offset + size, shard.begin() + shard.shard);
    if (from < until)
      backend_.copy_values(*parameter.value, from - offset, shard.values, from - shard.begin(),
                           until - from);
    offset += size;
  }
}

template <typename Backend>
void DeviceWorker<Backend>::update_shards(StageState& stage) {
  const bool whole_layers = shared_.experiment.parallel.zero < 3;
  for (const std::unique_ptr<ZeroShard>& shard : stage.shards) {
    if (shard->host_optimizer) {  // ZeRO-Offload: the OFFLOAD before U brought the gradients
      shard->host_optimizer->step();
      shard->host_gradients.fill(0.0f);
    } else {
      // Zero 1 and 2: the slice's current weights, out of the (whole) layers;
      // zero 3's slice is the master copy already.
      if (whole_layers) copy_out_slice(*shard, MemoryCategory::Workspace);
      shard->optimizer->step();
    }
    shard->gradients.fill(0.0f);
  }
}

template <typename Backend>
int64_t DeviceWorker<Backend>::move_shards(StageState& stage, OpKind kind) {
  const MemoryCategory slice_category =
      shared_.experiment.parallel.zero >= 3 ? MemoryCategory::Weights : MemoryCategory::Workspace;
  int64_t bytes = 0;
  for (const std::unique_ptr<ZeroShard>& shard : stage.shards) {
    if (kind == OpKind::Offload) {
      backend_.download(shard->gradients, shard->host_gradients);
    } else {
      shard->values = backend_.zeros(1, shard->shard, slice_category);
      backend_.upload(shard->host_values, shard->values);
    }
    bytes += shard->host_values.bytes();
  }
  return bytes;
}

template <typename Backend>
int64_t DeviceWorker<Backend>::gather_slices(ZeroShard& shard, MemoryCategory category) {
  renew_released(shard, false, category);
  Tensor flat = backend_.zeros(1, shard.padded(), category);
  backend_.copy_values(shard.values, 0, flat, shard.begin(), shard.shard);
  backend_.data_parallel_all_gather(flat, shard.experts);
  std::vector<Parameter> values;
  for (const Parameter& parameter : shard.parameters)
    values.push_back({parameter.value, parameter.value});
  backend_.scatter_gradients(flat, values);
  shard.gathered = true;
  return flat.bytes();
}

template <typename Backend>
int64_t DeviceWorker<Backend>::gather_weights(const Op& op) {
  // Zero 1 and 2: the updated slices, into every replica's whole layers.
  int64_t bytes = 0;
  for (const std::unique_ptr<ZeroShard>& shard : stages_[op.chunk].shards) {
    bytes += gather_slices(*shard, MemoryCategory::Workspace);
    shard->values.reset();
  }
  return bytes;
}

template <typename Backend>
void DeviceWorker<Backend>::release_gradients(StageState& stage) {
  if (!stage.released_gradients.empty()) return;
  for (const std::unique_ptr<ZeroShard>& shard : stage.shards)
    for (const Parameter& parameter : shard->parameters) {
      stage.released_gradients.push_back(
          {parameter.grad, {parameter.grad->rows(), parameter.grad->cols()}});
      parameter.grad->reset();
    }
}

template <typename Backend>
void DeviceWorker<Backend>::renew_gradients(StageState& stage) {
  for (const auto& [gradient, shape] : stage.released_gradients)
    backend_.renew(*gradient, shape[0], shape[1], MemoryCategory::CommBuffers);
  stage.released_gradients.clear();
}

// ---- Zero 3's units ----

template <typename Backend>
void DeviceWorker<Backend>::acquire_unit(int chunk, int layer) {
  StageState& stage = stages_[chunk];
  const bool in_op = unit_op_.chunk == chunk;
  const auto gather = [&](int unit) {
    for (int index : stage.unit_shards[unit]) {
      ZeroShard& shard = *stage.shards[index];
      if (shard.gathered) continue;
      if (in_op) open_report(unit_op_.gathers);
      const int64_t bytes = gather_slices(shard, MemoryCategory::CommBuffers);
      if (in_op) unit_op_.gathers.bytes += bytes;
    }
  };
  if (in_op && computes_weight_gradient(unit_op_.kind))
    for (int index : stage.unit_shards[layer])
      renew_released(*stage.shards[index], true, MemoryCategory::CommBuffers);
  gather(layer);
  if (!in_op) return;
  // FSDP's prefetch: the next layer this op reads (the forward goes up the
  // stage, a backward down) is gathered before this one computes, so two
  // layers are whole at a time, as the simulator counts them.
  const int step = unit_op_.kind == OpKind::Forward ? 1 : -1;
  for (int next = layer + step; next >= 0 && next < static_cast<int>(stage.unit_shards.size());
       next += step)
    if (!stage.unit_shards[next].empty()) {
      gather(next);
      break;
    }
}

template <typename Backend>
void DeviceWorker<Backend>::release_unit(int chunk, int layer) {
  StageState& stage = stages_[chunk];
  const bool in_op = unit_op_.chunk == chunk;
  for (int index : stage.unit_shards[layer]) {
    ZeroShard& shard = *stage.shards[index];
    if (in_op && computes_weight_gradient(unit_op_.kind)) {
      open_report(unit_op_.scatters);
      unit_op_.scatters.bytes += scatter_unit_gradients(shard);
    }
    // Kept: at an evaluation or the run's end; or, without resharding after
    // the forward, until the last micro-batch holding them runs its backward.
    const bool reshards = shared_.experiment.parallel.reshard_after_forward;
    if (units_held_ || (!reshards && !(in_op && unit_op_.frees_weights))) continue;
    free_gathered(shard);
  }
}

template <typename Backend>
void DeviceWorker<Backend>::renew_released(ZeroShard& shard, bool gradients,
                                           MemoryCategory category) {
  for (size_t p = 0; p < shard.parameters.size(); ++p) {
    Tensor& tensor = gradients ? *shard.parameters[p].grad : *shard.parameters[p].value;
    if (tensor.empty())
      backend_.renew(tensor, shard.weight_shapes[p][0], shard.weight_shapes[p][1], category);
  }
}

template <typename Backend>
void DeviceWorker<Backend>::free_gathered(ZeroShard& shard) {
  for (const Parameter& parameter : shard.parameters) parameter.value->reset();
  shard.gathered = false;
}

template <typename Backend>
int64_t DeviceWorker<Backend>::scatter_unit_gradients(ZeroShard& shard) {
  Tensor flat = backend_.gather_gradients(shard.parameters, shard.padded());
  backend_.data_parallel_reduce_scatter(flat, shard.experts);
  backend_.add_values(flat, shard.begin(), shard.gradients, 0, shard.shard);
  for (const Parameter& parameter : shard.parameters) parameter.grad->reset();
  return flat.bytes();
}

template <typename Backend>
void DeviceWorker<Backend>::hold_units(bool hold) {
  units_held_ = false;
  for (int chunk = 0; chunk < chunk_count(); ++chunk)
    for (int layer = 0; layer < static_cast<int>(stages_[chunk].unit_shards.size()); ++layer)
      hold ? acquire_unit(chunk, layer) : release_unit(chunk, layer);
  units_held_ = hold;
}

template <typename Backend>
void DeviceWorker<Backend>::begin_unit_op(const Op& op, int index) {
  StageState& stage = stages_[op.chunk];
  if (stage.unit_shards.empty()) return;
  unit_op_ = {};
  unit_op_.chunk = op.chunk;
  unit_op_.kind = op.kind;
  const bool finishes = op.kind == OpKind::Backward || op.kind == OpKind::BackwardWeight;
  unit_op_.frees_weights =
      shared_.experiment.parallel.reshard_after_forward || (finishes && stage.holding == 1);
  // The gathers: the schedule lists one before every F, B and BI that finds
  // the weights released, in order, with its reader's step and micro-batch.
  const auto reads = [&op](const Op& gather) {
    return gather.step == op.step && gather.microbatch == op.microbatch;
  };
  if (op.kind != OpKind::BackwardWeight && !stage.listed_gathers.empty() &&
      reads(stage.listed_gathers.front())) {
    unit_op_.gathers.op = stage.listed_gathers.front();
    unit_op_.gathers.listed = true;
    stage.listed_gathers.pop_front();
  }
  // The scatter: listed among the collectives right after a B or BW.
  const std::vector<Op>& ops = *current_.ops;
  for (size_t j = index + 1;
       computes_weight_gradient(op.kind) && j < ops.size() && is_collective(ops[j].kind); ++j)
    if (ops[j].kind == OpKind::ReduceScatter && ops[j].group == CommGroup::DataParallel &&
        !tensor_parallel_reported_[j]) {
      tensor_parallel_reported_[j] = 1;
      unit_op_.scatters.op = ops[j];
      unit_op_.scatters.op.step += current_.first_step;
      unit_op_.scatters.listed = true;
      break;
    }
}

template <typename Backend>
void DeviceWorker<Backend>::open_report(UnitReport& report) {
  if (!report.listed || report.open) return;
  backend_.begin(report.op);
  report.open = true;
}

template <typename Backend>
void DeviceWorker<Backend>::end_unit_op() {
  if (unit_op_.chunk < 0) return;  // not zero 3
  // Each report spans its first collective to the op's end (the scatters
  // opened after the gathers, so they close first); one with nothing to
  // move is a zero-length op, as other collectives with nothing to move are.
  for (UnitReport* report : {&unit_op_.scatters, &unit_op_.gathers}) {
    if (!report->listed) continue;
    open_report(*report);
    backend_.end(report->op, report->bytes);
  }
  int& holding = stages_[unit_op_.chunk].holding;
  if (unit_op_.kind == OpKind::Forward) ++holding;
  if (unit_op_.kind == OpKind::Backward || unit_op_.kind == OpKind::BackwardWeight) --holding;
  unit_op_ = {};
}

}  // namespace pipelab
