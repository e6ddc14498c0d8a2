#include "core/plan/stage_profile.h"

#include <cassert>
#include <stdexcept>
#include <string>

#include "core/model/model_limits.h"

namespace pipelab {
namespace {

constexpr int64_t kBytesPerValue = 4;  // float32

// One layer's per-sample numbers on one tensor-parallel shard.
struct ShardCost {
  double forward_flops = 0;
  double backward_input_flops = 0;
  double backward_weight_flops = 0;
  int64_t params = 0;
  int64_t activation_bytes = 0;
};

ShardCost full_cost(const LayerInfo& info) {
  return {info.forward_flops, info.backward_input_flops, info.backward_weight_flops, info.params,
          info.activation_bytes};
}

// A split linear: each shard multiplies in x out / tp. A column-parallel
// shard owns out / tp bias entries; a row-parallel shard adds the whole
// (replicated) bias after the all-reduce, and each computes its gradient.
ShardCost linear_shard_cost(const LayerInfo& info, bool has_bias, TensorParallelRole role, int tp) {
  const int64_t shard_in = role == TensorParallelRole::RowParallel ? info.in_features / tp : info.in_features;
  const int64_t shard_out = role == TensorParallelRole::ColumnParallel ? info.out_features / tp : info.out_features;
  const int64_t bias = has_bias ? shard_out : 0;
  const double matmul_flops = 2.0 * static_cast<double>(shard_in) * static_cast<double>(shard_out);
  ShardCost cost;
  cost.forward_flops = matmul_flops + static_cast<double>(bias);
  cost.backward_input_flops = matmul_flops;
  cost.backward_weight_flops = matmul_flops + static_cast<double>(bias);
  cost.params = shard_in * shard_out + bias;
  cost.activation_bytes = shard_in * kBytesPerValue;  // the (possibly split) input
  return cost;
}

// An elementwise layer on the split width does 1/tp of the work and keeps
// 1/tp of the activations (widths are checked to divide evenly).
ShardCost sharded_elementwise_cost(const LayerInfo& info, int tp) {
  assert(info.params == 0);
  ShardCost cost = full_cost(info);
  cost.forward_flops /= tp;
  cost.backward_input_flops /= tp;
  cost.backward_weight_flops /= tp;
  cost.activation_bytes /= tp;
  return cost;
}

// Every byte count below is a per-sample size times the micro-batch size, so
// bounding the sum of them all bounds each one.
void check_microbatch_bytes(const std::vector<LayerInfo>& infos, int64_t microbatch_size) {
  int64_t bytes_per_sample = infos.front().in_features * kBytesPerValue;  // sizes are checked by describe_layers
  for (const LayerInfo& info : infos) bytes_per_sample += info.activation_bytes + info.output_bytes;
  if (microbatch_size > kMaxMicrobatchBytes / bytes_per_sample)
    throw std::invalid_argument(
        "a micro-batch of " + std::to_string(microbatch_size) + " samples keeps and sends more than " +
        std::to_string(kMaxMicrobatchBytes >> 30) + " GiB through the model (" +
        std::to_string(bytes_per_sample) + " bytes per sample), more than PipeLab handles; "
        "lower training.batch_size or raise parallel.microbatches");
}

void check_tensor_parallel_widths(const std::vector<LayerInfo>& infos,
                                  const std::vector<TensorParallelRole>& roles, int tp) {
  for (size_t i = 0; i < infos.size(); ++i) {
    if (roles[i] != TensorParallelRole::ColumnParallel) continue;
    // The row-parallel partner's input width is the same number.
    if (infos[i].out_features % tp != 0)
      throw std::invalid_argument("tp = " + std::to_string(tp) + " does not divide linear layer " +
                                  std::to_string(i) + "'s width " + std::to_string(infos[i].out_features) +
                                  "; choose a tp that divides it or change the layer's out");
  }
}

}  // namespace

std::vector<TensorParallelRole> tensor_parallel_roles(const ModelSpec& model,
                                                      const std::vector<LayerRange>& stages) {
  std::vector<TensorParallelRole> roles(model.layers.size(), TensorParallelRole::Replicated);
  for (const LayerRange& stage : stages) {
    int pending_column = -1;  // a column-parallel linear still waiting for its row partner
    for (int i = stage.begin; i < stage.end; ++i) {
      const LayerType type = model.layers[i].type;
      if (type == LayerType::Linear) {
        if (pending_column < 0) {
          pending_column = i;
          continue;
        }
        roles[pending_column] = TensorParallelRole::ColumnParallel;
        for (int between = pending_column + 1; between < i; ++between)
          roles[between] = TensorParallelRole::Sharded;
        roles[i] = TensorParallelRole::RowParallel;
        pending_column = -1;
      } else if (type == LayerType::LayerNorm) {
        pending_column = -1;  // needs the full width: the pending linear stays replicated
      }
    }
  }
  return roles;
}

std::vector<StageProfile> profile_stages(const ModelSpec& model, const ParallelPlan& plan,
                                         int64_t microbatch_size) {
  if (plan.tp < 1) throw std::invalid_argument("parallel.tp must be >= 1, got " + std::to_string(plan.tp));
  if (microbatch_size < 1)
    throw std::invalid_argument("micro-batch size must be >= 1, got " + std::to_string(microbatch_size) +
                                "; lower parallel.microbatches or parallel.dp, or raise training.batch_size");
  const std::vector<LayerInfo> infos = describe_layers(model);
  check_microbatch_bytes(infos, microbatch_size);
  const std::vector<LayerRange> ranges = partition_layers(model, plan);
  const std::vector<TensorParallelRole> roles = tensor_parallel_roles(model, ranges);
  const int tp = plan.tp;
  if (tp > 1) check_tensor_parallel_widths(infos, roles, tp);

  const double samples = static_cast<double>(microbatch_size);
  std::vector<StageProfile> profiles;
  profiles.reserve(ranges.size());
  for (const LayerRange& range : ranges) {
    StageProfile profile;
    profile.layers = range;
    int64_t activation_bytes_per_sample = 0;
    for (int i = range.begin; i < range.end; ++i) {
      const LayerInfo& info = infos[i];
      ShardCost cost;
      switch (roles[i]) {
        case TensorParallelRole::Replicated: cost = full_cost(info); break;
        case TensorParallelRole::Sharded: cost = sharded_elementwise_cost(info, tp); break;
        case TensorParallelRole::ColumnParallel:
        case TensorParallelRole::RowParallel:
          cost = linear_shard_cost(info, model.layers[i].bias, roles[i], tp);
          break;
      }
      profile.forward_flops += cost.forward_flops * samples;
      profile.backward_input_flops += cost.backward_input_flops * samples;
      profile.backward_weight_flops += cost.backward_weight_flops * samples;
      profile.params += cost.params;
      activation_bytes_per_sample += cost.activation_bytes;

      // With one shard there is nothing to combine.
      if (tp > 1 && roles[i] == TensorParallelRole::RowParallel)
        profile.tp_allreduces.push_back({i, microbatch_size * info.out_features * kBytesPerValue, true});
      if (tp > 1 && roles[i] == TensorParallelRole::ColumnParallel)
        profile.tp_allreduces.push_back({i, microbatch_size * info.in_features * kBytesPerValue, false});
    }
    profile.activation_bytes = activation_bytes_per_sample * microbatch_size;
    // Stage 0's input is the data batch and the last stage's output feeds the
    // loss; both are filled in the same way so every stage reads alike.
    profile.input_bytes = microbatch_size * infos[range.begin].in_features * kBytesPerValue;
    profile.output_bytes = microbatch_size * infos[range.end - 1].output_bytes;
    profiles.push_back(profile);
  }
  return profiles;
}

}  // namespace pipelab
