#include "core/sim/memory_model.h"

#include <algorithm>
#include <cassert>
#include <climits>

#include "core/sim/runtime_memory.h"
#include "core/sim/zero_sharding.h"

namespace pipelab {
StageMemory stage_memory(const CostModel& cost, int stage, int zero, int dp, int ep,
                         bool reshard_after_forward) {
  StageMemory memory;
  if (cost.is_unit()) {
    memory.weights = 1;
    memory.gradients = 1;
    memory.optimizer_state = cost.optimizer_slots();
    memory.activations = 1;
    memory.kept_input = 0;
    memory.recomputed = 1;
    memory.recompute_forward_peak = 1;
    return memory;
  }
  assert(stage >= 0 && stage < static_cast<int>(cost.stages().size()));
  const StageProfile& profile = cost.stages()[stage];
  const ShardedModelStates states =
      sharded_model_states(profile, zero, dp, ep, cost.optimizer_slots(), reshard_after_forward);
  memory.weights = states.weights;
  memory.gradients = states.gradients;
  memory.optimizer_state = states.optimizer_state;
  memory.collective_buffers = states.collective_buffers;
  memory.activations = profile.activation_bytes;
  memory.kept_input = profile.recompute_kept_bytes;
  memory.recomputed = profile.recompute_working_bytes;
  memory.recompute_forward_peak = profile.recompute_forward_peak_bytes;
  memory.backward_working = profile.backward_peak_bytes;
  memory.split_backward_working = profile.split_backward_peak_bytes;
  memory.split_backward_kept = profile.split_backward_kept_bytes;
  memory.loss_gradient = profile.loss_gradient_bytes;
  return memory;
}

MemoryModel::MemoryModel(const Schedule& schedule, const CostModel& cost)
    : schedule_(schedule), devices_(schedule.device_count()) {
  const int64_t runtime = cost.is_unit() ? 0 : runtime_memory_bytes(schedule, cost.device());
  for (int d = 0; d < schedule.device_count(); ++d) {
    DeviceState& state = devices_[d];
    add(d, 0, MemoryCategory::Workspace, runtime);
    const int rank = schedule.layout().coord_of(d).pipeline_rank;
    state.chunk_memory.resize(schedule.chunks);
    state.gradients_allocated.assign(schedule.chunks, 0);
    state.changes.reserve(schedule.devices[d].size() + 16);
    for (int chunk = 0; chunk < schedule.chunks; ++chunk) {
      const StageMemory stage =
          stage_memory(cost, schedule.layout().stage_of(rank, chunk), schedule.zero,
                       schedule.data_parallel_size(), schedule.ep, schedule.reshard_after_forward);
      state.chunk_memory[chunk] = stage;
      add(d, 0, MemoryCategory::Weights, stage.weights);
      add(d, 0, MemoryCategory::CommBuffers, stage.collective_buffers);
      // Optimizer offloading keeps the optimizer state on the host.
      add(d, 0,
          schedule.offload == OffloadMode::Optimizer ? MemoryCategory::Host : MemoryCategory::OptimizerState,
          stage.optimizer_state);
    }
    init_versions(d);
  }
}

void MemoryModel::add(int device, double t, MemoryCategory category, int64_t bytes) {
  if (bytes != 0) devices_[device].changes.push_back({t, category, bytes});
}

// One pass over the device's ops: who reads which version, and which versions
// exist from the start (read before anything here writes them: the initial
// weights, or the stash an asynchronous window starts with). Versions are
// >= 0 (op_matching checks), so they index the vectors directly.
void MemoryModel::init_versions(int device) {
  DeviceState& state = devices_[device];
  state.versions.resize(schedule_.chunks);
  std::vector<std::vector<char>> written(schedule_.chunks);
  for (const Op& op : schedule_.devices[device]) {
    if (op.kind == OpKind::Recompute) state.recompute = true;
    const bool reads = op_kind_facts(op.kind).reads_weights;
    if (!reads && !op_kind_facts(op.kind).writes_weights) continue;
    const int chunk = chunk_of(op);
    VersionState& versions = state.versions[chunk];
    const size_t version = static_cast<size_t>(op.weight_version);
    if (versions.readers_left.size() <= version) {
      versions.readers_left.resize(version + 1, 0);
      versions.born.resize(version + 1, 0);
      written[chunk].resize(version + 1, 0);
    }
    if (!reads) {
      written[chunk][version] = 1;
      continue;
    }
    ++versions.readers_left[version];
    if (!written[chunk][version] && !versions.born[version]) {
      versions.born[version] = 1;
      versions.current = std::max(versions.current, op.weight_version);
      ++versions.alive;
    }
  }
  for (int chunk = 0; chunk < schedule_.chunks; ++chunk) {
    const VersionState& versions = state.versions[chunk];
    if (versions.alive > 1)
      add(device, 0, MemoryCategory::StashedWeights,
          (versions.alive - 1) * state.chunk_memory[chunk].weights);
    state.peaks.weight_versions = std::max(state.peaks.weight_versions, versions.alive);
  }
}

void MemoryModel::version_read_done(int device, int chunk, int version, double t) {
  DeviceState& state = devices_[device];
  VersionState& versions = state.versions[chunk];
  const int index = version;
  assert(versions.readers_left[index] > 0);
  if (--versions.readers_left[index] == 0 && versions.born[index] && version != versions.current) {
    --versions.alive;
    add(device, t, MemoryCategory::StashedWeights, -state.chunk_memory[chunk].weights);
  }
}

void MemoryModel::version_written(int device, int chunk, int version, double t) {
  DeviceState& state = devices_[device];
  VersionState& versions = state.versions[chunk];
  if (version <= versions.current) return;  // not newer: nothing changes
  const int alive_before = versions.alive;
  const int previous = versions.current;
  versions.born[version] = 1;
  versions.current = version;
  ++versions.alive;
  if (previous != kNoVersion && versions.readers_left[previous] == 0) --versions.alive;
  add(device, t, MemoryCategory::StashedWeights,
      (versions.alive - alive_before) * state.chunk_memory[chunk].weights);
  state.peaks.weight_versions = std::max(state.peaks.weight_versions, versions.alive);
}

void MemoryModel::op_started(const Op& op, double t) {
  DeviceState& state = devices_[op.device];
  const int chunk = chunk_of(op);
  const StageMemory& stage = state.chunk_memory[chunk];
  switch (op.kind) {
    case OpKind::Forward:
      add(op.device, t, MemoryCategory::Activations,
          state.recompute ? stage.recompute_forward_peak : stage.activations);
      break;
    case OpKind::Recompute:
      add(op.device, t, MemoryCategory::Activations, stage.recomputed);
      break;
    case OpKind::Offload:  // the host copy exists from the start of the copy
      add(op.device, t, MemoryCategory::Host, offloaded_bytes(op, stage));
      break;
    case OpKind::Reload:  // activations come back; a step's weights overwrite the old ones
      if (op.microbatch >= 0) add(op.device, t, MemoryCategory::Activations, stage.activations);
      break;
    case OpKind::Backward:
      add(op.device, t, MemoryCategory::Activations, stage.backward_working - stage.loss_gradient);
      break;
    case OpKind::BackwardInput:
      add(op.device, t, MemoryCategory::Activations,
          stage.split_backward_working - stage.loss_gradient);
      break;
    default:
      break;
  }
  if (computes_weight_gradient(op.kind) && !state.gradients_allocated[chunk]) {
    state.gradients_allocated[chunk] = 1;
    add(op.device, t, MemoryCategory::Gradients, stage.gradients);
  }
}

void MemoryModel::op_finished(const Op& op, double t) {
  DeviceState& state = devices_[op.device];
  const int chunk = chunk_of(op);
  const StageMemory& stage = state.chunk_memory[chunk];
  if (op.kind == OpKind::Forward) {
    if (state.recompute)
      add(op.device, t, MemoryCategory::Activations,
          -(stage.recompute_forward_peak - stage.kept_input));
    add(op.device, t, MemoryCategory::Activations, stage.loss_gradient);
    ++state.inflight;
    state.peaks.peak_inflight_microbatches =
        std::max(state.peaks.peak_inflight_microbatches, state.inflight);
  } else if (computes_weight_gradient(op.kind)) {  // the micro-batch's activations are done
    add(op.device, t, MemoryCategory::Activations,
        state.recompute ? -(stage.kept_input + stage.recomputed) : -stage.activations);
    if (op.kind == OpKind::Backward) add(op.device, t, MemoryCategory::Activations, -stage.backward_working);
    if (op.kind == OpKind::BackwardWeight)
      add(op.device, t, MemoryCategory::Activations, -stage.split_backward_kept);
    --state.inflight;
  } else if (op.kind == OpKind::BackwardInput) {
    add(op.device, t, MemoryCategory::Activations,
        stage.split_backward_kept - stage.split_backward_working);
  } else if (op.kind == OpKind::Offload && op.microbatch >= 0) {  // the device copy is free once the copy ends
    add(op.device, t, MemoryCategory::Activations, -stage.activations);
  } else if (op.kind == OpKind::Reload && op.microbatch >= 0) {
    add(op.device, t, MemoryCategory::Host, -stage.activations);
  } else if (op.kind == OpKind::Update || op.kind == OpKind::PushGradient || op.kind == OpKind::Offload) {
    // Applied, sent to the parameter server or to the host: the device's
    // gradient buffer is done; the host's copy goes once the host update ends.
    if (state.gradients_allocated[chunk]) {
      state.gradients_allocated[chunk] = 0;
      add(op.device, t, MemoryCategory::Gradients, -stage.gradients);
    }
    if (op.kind == OpKind::Update && schedule_.offload == OffloadMode::Optimizer)
      add(op.device, t, MemoryCategory::Host, -stage.gradients);
  }
  // Writers: the optimizer step, or (async data parallel) fetching the server's weights.
  const OpKindFacts& facts = op_kind_facts(op.kind);
  if (facts.writes_weights) version_written(op.device, chunk, op.weight_version, t);
  if (facts.reads_weights) version_read_done(op.device, chunk, op.weight_version, t);
}

int64_t MemoryModel::offloaded_bytes(const Op& op, const StageMemory& stage) {
  return op.microbatch >= 0 ? stage.activations : stage.gradients;
}

void MemoryModel::message_arrived(int device, int64_t bytes, double t) {
  add(device, t, MemoryCategory::CommBuffers, bytes);
}

void MemoryModel::message_consumed(int device, int64_t bytes, double t) {
  add(device, t, MemoryCategory::CommBuffers, -bytes);
}

std::vector<DeviceMemoryPeaks> MemoryModel::finish(std::vector<MemorySample>* samples) {
  std::vector<DeviceMemoryPeaks> peaks;
  peaks.reserve(devices_.size());
  for (int d = 0; d < static_cast<int>(devices_.size()); ++d) {
    DeviceState& state = devices_[d];
    std::vector<Change>& changes = state.changes;
    // A device's compute ops report in time order; message arrivals (timed
    // by the sender) and copies to and from the host may come out of order.
    auto by_time = [](const Change& a, const Change& b) { return a.t < b.t; };
    if (!std::is_sorted(changes.begin(), changes.end(), by_time))
      std::stable_sort(changes.begin(), changes.end(), by_time);
    MemoryBytes now{};
    for (size_t i = 0; i < changes.size(); ++i) {
      now[static_cast<int>(changes[i].category)] += changes[i].bytes;
      const bool last_at_this_time = i + 1 == changes.size() || changes[i + 1].t != changes[i].t;
      if (!last_at_this_time) continue;
      for (int c = 0; c < kMemoryCategoryCount; ++c)
        state.peaks.peak_bytes[c] = std::max(state.peaks.peak_bytes[c], now[c]);
      state.peaks.peak_total_bytes = std::max(state.peaks.peak_total_bytes, total_bytes(now));
      if (samples) samples->push_back({d, changes[i].t, now});
    }
    peaks.push_back(state.peaks);
    changes = {};
  }
  return peaks;
}

}  // namespace pipelab
