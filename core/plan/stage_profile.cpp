#include "core/plan/stage_profile.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/model/image_layers.h"
#include "core/model/model_limits.h"

namespace pipelab {
namespace {

constexpr int64_t kBytesPerValue = 4;  // float32
constexpr int64_t kLossValueBytes = 4;  // the loss reads its logits in float32 in every precision

// One layer's per-sample numbers on one tensor-parallel shard.
struct ShardCost {
  double forward_flops = 0;
  double backward_input_flops = 0;
  double backward_weight_flops = 0;
  int64_t params = 0;
  int64_t activation_bytes = 0;  // in float32 (masks: one byte per element)
  SampleGemms gemms;             // behind the FLOPs, where the layer lists them
};

ShardCost full_cost(const LayerInfo& info) {
  ShardCost cost{info.forward_flops, info.backward_input_flops, info.backward_weight_flops,
                 info.params,        info.activation_bytes,     {}};
  if (info.type == LayerType::Linear)
    cost.gemms.add_linear(info.tokens, info.token_in(), info.token_out());
  return cost;
}

// A split linear: each shard multiplies in x out / tp per position. A
// column-parallel shard owns out / tp bias entries; a row-parallel shard adds
// the whole (replicated) bias after the all-reduce, and each computes its gradient.
ShardCost linear_shard_cost(const LayerInfo& info, bool has_bias, TensorParallelRole role, int tp) {
  const int64_t shard_in = role == TensorParallelRole::RowParallel ? info.token_in() / tp : info.token_in();
  const int64_t shard_out = role == TensorParallelRole::ColumnParallel ? info.token_out() / tp : info.token_out();
  const int64_t bias = has_bias ? shard_out : 0;
  const double tokens = static_cast<double>(info.tokens);
  const double matmul_flops = 2.0 * static_cast<double>(shard_in) * static_cast<double>(shard_out) * tokens;
  ShardCost cost;
  cost.forward_flops = matmul_flops + static_cast<double>(bias) * tokens;
  cost.backward_input_flops = matmul_flops;
  cost.backward_weight_flops = matmul_flops + static_cast<double>(bias) * tokens;
  cost.params = shard_in * shard_out + bias;
  cost.activation_bytes = shard_in * info.tokens * kBytesPerValue;  // the (possibly split) input
  cost.gemms.add_linear(info.tokens, shard_in, shard_out);
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

// A vocabulary-parallel embedding: vocab / tp token rows per shard (the
// position table, one row for each of the model's `sequence` positions, is
// whole on each); each shard looks up every position it holds.
ShardCost embedding_shard_cost(const LayerInfo& info, const LayerSpec& spec, int tp, int64_t sequence) {
  ShardCost cost = full_cost(info);
  const int64_t positions = spec.position == PositionEncoding::Rope ? 0 : sequence;
  cost.params = (spec.vocab / tp + positions) * spec.dim;
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
        std::to_string(bytes_per_sample) + " bytes per sample), more than PipeLab handles; " +
        (microbatch_size > 1 ? "lower training.batch_size or raise parallel.microbatches"
                             : "use a smaller model or a shorter sequence, or split a long sequence over more "
                               "ranks (parallel.cp)"));
}

std::string tp_text(int tp) { return "tp = " + std::to_string(tp); }

void check_tensor_parallel_widths(const ModelSpec& model, const std::vector<LayerInfo>& infos,
                                  const std::vector<TensorParallelRole>& roles, int tp, bool sequence_parallel) {
  for (size_t i = 0; i < infos.size(); ++i) {
    const std::string layer = std::to_string(i);
    switch (roles[i]) {
      case TensorParallelRole::ColumnParallel:
        // The row-parallel partner's input width is the same number.
        if (infos[i].token_out() % tp != 0)
          throw std::invalid_argument(tp_text(tp) + " does not divide linear layer " + layer + "'s width " +
                                      std::to_string(infos[i].token_out()) +
                                      "; choose a tp that divides it or change the layer's out");
        break;
      case TensorParallelRole::VocabParallel:
        if (model.layers[i].vocab % tp != 0)
          throw std::invalid_argument(tp_text(tp) + " does not divide embedding layer " + layer + "'s vocab " +
                                      std::to_string(model.layers[i].vocab) +
                                      " (each shard holds vocab / tp rows); choose a tp that divides it "
                                      "or pad the vocab to a multiple of tp");
        break;
      case TensorParallelRole::BlockParallel: {
        const TransformerBlockShape& block = infos[i].block;
        if (block.heads % tp != 0)
          throw std::invalid_argument(tp_text(tp) + " does not divide transformer_block layer " + layer +
                                      "'s heads = " + std::to_string(block.heads) +
                                      " (attention is split by heads); choose a tp that divides it or change heads");
        if (block.kv_heads % tp != 0)
          throw std::invalid_argument(tp_text(tp) + " does not divide transformer_block layer " + layer +
                                      "'s kv_heads = " + std::to_string(block.kv_heads) +
                                      " (each shard holds whole key/value heads, as Megatron-LM's query "
                                      "groups); choose a tp that divides kv_heads, or raise kv_heads");
        if (block.ffn % tp != 0)
          throw std::invalid_argument(tp_text(tp) + " does not divide transformer_block layer " + layer +
                                      "'s ffn = " + std::to_string(block.ffn) +
                                      "; choose a tp that divides it or change ffn");
        if (sequence_parallel && block.tokens % tp != 0)
          throw std::invalid_argument(tp_text(tp) + " does not divide the sequence length " +
                                      std::to_string(block.tokens) +
                                      ", which parallel.sequence_parallel splits; choose a tp that divides it "
                                      "or change model.input");
        break;
      }
      default:
        break;
    }
  }
}

// A micro-batch's dispatch buffer of a moe layer or a block's experts: every
// expert's capacity of token slots.
int64_t expert_slot_bytes(const MoeShape& moe, int64_t microbatch_size, int64_t bytes_per_value) {
  const int64_t capacity =
      expert_capacity(moe.capacity_factor, microbatch_size * moe.tokens, moe.top_k, moe.experts);
  return moe.experts * capacity * moe.dim * bytes_per_value;
}

// A block's ring attention under context parallelism, in the order the
// lowering meets them: the forward's K and V, then (read last first in the
// backward) K and V again after their gradients' way home.
void add_context_parallel_exchanges(std::vector<ContextParallelExchange>& out, int layer,
                                    const TransformerBlockShape& shape, const BlockCost& block,
                                    const BlockSplit& split, int64_t microbatch_size, int64_t bytes_per_value) {
  const int64_t key_value_bytes =
      2 * shape.tokens * split.cp * (shape.kv_width() / split.tp) * microbatch_size * bytes_per_value;
  const double hidden = block.attention_flops * static_cast<double>(microbatch_size);
  out.push_back({layer, key_value_bytes, true, false, hidden});
  out.push_back({layer, key_value_bytes, false, true, hidden});
  out.push_back({layer, key_value_bytes, false, false, hidden});
}

// The kernels one pass of a layer launches (forward, input gradient, weight
// gradient), counted as a fused GPU implementation runs it: a GEMM with its
// bias in the epilogue is one kernel and a bias gradient another, an
// elementwise layer or a norm one per pass (a norm's weight gradient one
// more), a flatten none. A transformer block as Megatron-LM fuses it: in each
// of the forward and the input gradient, its two norms, the QKV, Proj, FFN1
// and FFN2 GEMMs, the bias-activation and two bias-dropout-add kernels (one
// more with rotary positions), and the attention core's three (scores,
// softmax, probabilities times V) once per ring step under context
// parallelism; in the weight gradient its four GEMMs, their four bias
// gradients and the norms'. A mixture of experts replaces the MLP's three by
// the gate, the routing, the dispatch and the combine, and three per expert
// held (two in the weight gradient).
struct LayerKernels {
  int64_t forward = 0;
  int64_t backward_input = 0;
  int64_t backward_weight = 0;
};

LayerKernels layer_kernels(const LayerInfo& info, const LayerSpec& spec, int ep, int cp) {
  const int64_t bias = spec.bias ? 1 : 0;
  auto experts_held = [&](int64_t experts) { return experts / std::max(1, ep); };
  switch (info.type) {
    case LayerType::Linear:
    case LayerType::Conv2d: return {1, 1, 1 + bias};
    case LayerType::Embedding: return {1, 0, 1};
    case LayerType::LayerNorm:
    case LayerType::BatchNorm: return {1, 1, 1};
    case LayerType::Flatten: return {0, 0, 0};
    case LayerType::ResidualBlock: return {7, 7, 4};  // two conv + norm pairs, the shortcut's, the sum
    case LayerType::Moe: {
      const int64_t held = experts_held(info.moe.experts);
      return {4 + 3 * held, 4 + 3 * held, 1 + 2 * held};
    }
    case LayerType::TransformerBlock: {
      const TransformerBlockShape& block = info.block;
      const int64_t mlp = block.has_experts() ? 4 + 3 * experts_held(block.experts) : 3;
      const int64_t mlp_weights = block.has_experts() ? 1 + 2 * experts_held(block.experts) : 2 + 2 * bias;
      const int64_t pass = 2 + 2 + 2 + (block.rotary ? 1 : 0) + 3 * cp + mlp;  // norms, QKV + Proj, adds
      return {pass, pass, 2 + 2 + 2 * bias + mlp_weights};
    }
    default: return {1, 1, 0};  // relu, gelu, tanh, sigmoid, dropout, pools
  }
}

// Where a layer's tensor-parallel collectives come from.
struct CollectiveContext {
  int tp = 1;
  int64_t microbatch_size = 0;
  int64_t activation_bytes = 0;  // one value's, in the run's precision
  bool sequence_parallel = false;
  bool sequence_model = false;
  bool vocab_parallel_loss = false;  // the layer is the output layer, and its logits are split
};

// The collectives layer `layer` needs on a tensor-parallel shard, in the order
// they run.
void add_tensor_parallel_collectives(std::vector<TensorParallelAllReduce>& out, int layer, TensorParallelRole role,
                                     const LayerInfo& info, const CollectiveContext& context) {
  using C = TensorParallelCollective;
  const int64_t value_bytes = context.microbatch_size * context.activation_bytes;
  const bool sequence_parallel = context.sequence_parallel;
  const bool sequence_model = context.sequence_model;
  const int64_t out_bytes = info.out_features * value_bytes;
  const int64_t in_bytes = info.in_features * value_bytes;
  switch (role) {
    case TensorParallelRole::RowParallel:
      out.push_back({layer, out_bytes, true, C::AllReduce});
      break;
    case TensorParallelRole::ColumnParallel:
      // A sequence model's output layer under sequence parallelism gathers the
      // sequence first, and its input gradient is scattered back.
      if (sequence_parallel && sequence_model) {
        out.push_back({layer, in_bytes, true, C::AllGather});
        out.push_back({layer, in_bytes, false, C::ReduceScatter});
      } else {
        out.push_back({layer, in_bytes, false, C::AllReduce});
      }
      if (context.vocab_parallel_loss) {
        // The loss on the vocabulary-split logits, right after the forward
        // (core/runtime/vocab_parallel_loss.h): the row maxima in tp slots,
        // then per row the exp sum, the label's logit and the ties, in fp32.
        const int64_t rows = context.microbatch_size * info.tokens;
        out.push_back({layer, rows * context.tp * kBytesPerValue, true, C::AllReduce});
        out.push_back({layer, rows * 3 * kBytesPerValue, true, C::AllReduce});
      }
      break;
    case TensorParallelRole::VocabParallel:
      // The partial lookups are summed; under sequence parallelism each shard
      // keeps its slice, and the backward gathers the whole gradient back
      // (each shard's token rows take gradients from every position).
      out.push_back({layer, out_bytes, true, sequence_parallel ? C::ReduceScatter : C::AllReduce});
      if (sequence_parallel) out.push_back({layer, out_bytes, false, C::AllGather, true});
      break;
    case TensorParallelRole::BlockParallel:
      if (sequence_parallel) {
        // Forward: gather before QKV, scatter after Proj, gather before FFN1,
        // scatter after FFN2. Backward, per half from the top: gather the
        // output gradient, scatter the norm output's gradient, gather the
        // norm output again for the weight gradient (gpt_block.h).
        for (C collective : {C::AllGather, C::ReduceScatter, C::AllGather, C::ReduceScatter})
          out.push_back({layer, out_bytes, true, collective});
        for (C collective : {C::AllGather, C::ReduceScatter, C::AllGather, C::AllGather, C::ReduceScatter,
                             C::AllGather})
          out.push_back({layer, out_bytes, false, collective});
      } else {
        // After Proj and FFN2 in the forward; after FFN1's and QKV's input gradients in the backward.
        // With experts the MLP's two sum the experts' slots (moe_layer.h), E x capacity rows.
        const int64_t mlp_bytes =
            info.has_experts() ? expert_slot_bytes(info.moe, context.microbatch_size, context.activation_bytes)
                               : out_bytes;
        out.push_back({layer, out_bytes, true, C::AllReduce});
        out.push_back({layer, mlp_bytes, true, C::AllReduce});
        out.push_back({layer, mlp_bytes, false, C::AllReduce});
        out.push_back({layer, out_bytes, false, C::AllReduce});
      }
      break;
    default:
      // A standalone moe layer between sequence-parallel blocks gathers the
      // sequence before routing it, and in its backward gathers the output
      // gradient and the input again (moe_layer.h); nothing is scattered.
      if (sequence_parallel && sequence_model && info.type == LayerType::Moe) {
        out.push_back({layer, out_bytes, true, C::AllGather});
        out.push_back({layer, out_bytes, false, C::AllGather});
        out.push_back({layer, out_bytes, false, C::AllGather});
      }
      break;
  }
}

// Under sequence parallelism, the parameters of a layer whose gradient a
// shard takes from its slice of the sequence only: a block's two norms (and
// its experts' gate, fed partial gradients, moe_layer.h), and every
// replicated layer's (a layernorm between blocks and the output).
int64_t sequence_partial_params(const LayerInfo& info, TensorParallelRole role, int64_t params) {
  // A moe layer gathers the whole sequence and takes whole gradients (moe_layer.h).
  if (role == TensorParallelRole::Replicated) return info.type == LayerType::Moe ? 0 : params;
  if (role != TensorParallelRole::BlockParallel) return 0;
  const int64_t per_norm = info.block.norm == NormType::LayerNorm ? 2 : 1;  // gain (and bias)
  const int64_t gate = info.has_experts() ? info.moe.dim * info.moe.experts : 0;
  return 2 * per_norm * info.block.dim + gate;
}

// How many shards split a layer's input (or output) width: a column-parallel
// linear's output and a row-parallel one's input, an elementwise layer
// between them, and the vocabulary of an embedding's table (not its
// activations).
int64_t shard_divisor(TensorParallelRole role, int tp, bool input) {
  switch (role) {
    case TensorParallelRole::ColumnParallel: return input ? 1 : tp;
    case TensorParallelRole::RowParallel: return input ? tp : 1;
    case TensorParallelRole::Sharded: return tp;
    default: return 1;
  }
}

// A float32 byte count (LayerInfo's) in the run's activation precision; a
// dropout layer's mask stays one byte per element.
int64_t in_precision(int64_t fp32_bytes, LayerType type, const PrecisionBytes& precision) {
  if (type == LayerType::Dropout) return fp32_bytes;
  return fp32_bytes / kBytesPerValue * precision.activation;
}

// A synced batchnorm's two collectives (batch_statistics_allreduces), or a
// synced residual block's, one pair per batch norm.
void add_batch_statistics_allreduces(std::vector<BatchStatisticsAllReduce>& list, int layer, const LayerSpec& spec,
                                     const LayerInfo& info) {
  if (!spec.sync) return;
  int norms = 0;
  int64_t channels = 0;
  if (spec.type == LayerType::BatchNorm) {
    norms = 1;
    channels = info.image_in.valid() ? info.image_in.channels : info.in_features;
  } else if (spec.type == LayerType::ResidualBlock) {
    norms = residual_shape(info.image_in, spec.out, spec.stride).projection ? 3 : 2;
    channels = info.image_out.channels;
  }
  for (int n = 0; n < norms; ++n) {
    list.push_back({layer, (2 * channels + 1) * kBytesPerValue, true});
    list.push_back({layer, 2 * channels * kBytesPerValue, false});
  }
}

// A moe layer's all-to-alls under expert parallelism: the dispatch and the
// combine in the forward, their gradients in the backward; each moves the
// layer's whole dispatch buffer (every expert's capacity of token slots).
void add_expert_all_to_alls(std::vector<ExpertAllToAll>& list, int layer, const MoeShape& moe,
                            int64_t microbatch_size, int64_t bytes_per_value) {
  const int64_t bytes = expert_slot_bytes(moe, microbatch_size, bytes_per_value);
  for (const bool in_forward : {true, false})
    for (int direction = 0; direction < 2; ++direction) list.push_back({layer, bytes, in_forward});
}

}  // namespace

std::vector<TensorParallelRole> tensor_parallel_roles(const ModelSpec& model,
                                                      const std::vector<LayerRange>& stages) {
  std::vector<TensorParallelRole> roles(model.layers.size(), TensorParallelRole::Replicated);
  for (const LayerRange& stage : stages) {
    int pending_column = -1;  // a column-parallel linear still waiting for its row partner
    for (int i = stage.begin; i < stage.end; ++i) {
      const LayerType type = model.layers[i].type;
      if (type == LayerType::Embedding) {
        roles[i] = TensorParallelRole::VocabParallel;
        continue;
      }
      if (type == LayerType::TransformerBlock) {
        roles[i] = TensorParallelRole::BlockParallel;
        pending_column = -1;  // a linear before a block needs the full width
        continue;
      }
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
      } else if (type == LayerType::LayerNorm || type == LayerType::BatchNorm || type == LayerType::Moe) {
        pending_column = -1;  // needs the full width: the pending linear stays replicated
      }
    }
    // A sequence model's output layer: column-parallel over the vocabulary.
    const int last = static_cast<int>(model.layers.size()) - 1;
    if (pending_column == last && stage.end == last + 1 && is_sequence_model(model))
      roles[last] = TensorParallelRole::ColumnParallel;
  }
  return roles;
}

bool output_splits_sequence(const ModelSpec& model, const std::vector<TensorParallelRole>& roles,
                            int layer, bool sequence_parallel) {
  if (!sequence_parallel || !is_sequence_model(model)) return false;
  const TensorParallelRole role = roles[static_cast<size_t>(layer)];
  return role != TensorParallelRole::ColumnParallel && role != TensorParallelRole::Sharded;
}

namespace {

// What one context rank runs: the model's layers on s / cp positions of
// each sequence (BlockSplit gives attention the whole sequence's keys).
ModelSpec context_rank_model(const ModelSpec& model, int cp) {
  if (cp < 1) throw std::invalid_argument("parallel.cp must be >= 1, got " + std::to_string(cp));
  if (cp == 1) return model;
  const std::string field = "parallel.cp = " + std::to_string(cp);
  if (!is_sequence_model(model))
    throw std::invalid_argument(field + " splits a Transformer's sequences over ranks, and this model does "
                                "not start with an embedding; set cp = 1");
  const int64_t sequence = sequence_length(model);
  if (sequence % (2 * cp) != 0)
    throw std::invalid_argument(field + " cuts the sequence length " + std::to_string(sequence) + " into 2 x cp = " +
                                std::to_string(2 * cp) +
                                " equal chunks (each rank takes one from each end, balancing causal attention), "
                                "which it does not divide; choose a cp with 2 cp dividing model.input, or "
                                "change the sequence length");
  ModelSpec local = model;
  local.input = {sequence / cp};
  return local;
}

}  // namespace

std::vector<StageProfile> profile_stages(const ModelSpec& whole_model, const ParallelPlan& plan,
                                         int64_t microbatch_size, Precision precision,
                                         bool fp32_gradients) {
  if (plan.tp < 1) throw std::invalid_argument("parallel.tp must be >= 1, got " + std::to_string(plan.tp));
  if (microbatch_size < 1)
    throw std::invalid_argument("micro-batch size must be >= 1, got " + std::to_string(microbatch_size) +
                                "; lower parallel.microbatches or parallel.dp, or raise training.batch_size");
  const ModelSpec model = context_rank_model(whole_model, plan.cp);
  const std::vector<LayerInfo> infos = describe_layers(model);
  check_microbatch_bytes(infos, microbatch_size);
  const std::vector<LayerRange> ranges = partition_layers(model, plan);
  const std::vector<TensorParallelRole> roles = tensor_parallel_roles(model, ranges);
  const int tp = plan.tp;
  const BlockSplit split = block_split(plan);
  if (tp > 1) check_tensor_parallel_widths(model, infos, roles, tp, split.sequence_parallel);
  const PrecisionBytes bytes = precision_bytes(precision, fp32_gradients);

  const double samples = static_cast<double>(microbatch_size);
  std::vector<StageProfile> profiles;
  profiles.reserve(ranges.size());
  // A model repeats one block shape many times: cost it once.
  std::optional<std::pair<TransformerBlockShape, BlockCost>> last_block;
  for (const LayerRange& range : ranges) {
    StageProfile profile;
    profile.layers = range;
    profile.precision = bytes;
    int64_t activation_bytes_per_sample = 0;
    // Block recomputation's checkpoints: the inputs of the blocks that start a
    // group of recompute_layers blocks (after the stage's first layer).
    const int group = std::max(plan.recompute_layers, 1);
    int blocks_seen = 0;
    int64_t block_checkpoints_per_sample = 0;
    int64_t largest_block_per_sample = 0;
    int64_t group_rebuilt_per_sample = 0;  // the current group's kept activations less its input
    int64_t largest_rebuilt_group_per_sample = 0;
    int64_t other_layers_per_sample = 0;       // activations of the stage's layers that are not blocks
    int64_t working_per_sample = 0;            // the largest layer's backward gradient buffers
    // Per stage layer, per sample: its kept activations, its backward's
    // gradient buffers (output gradient included) and what its BI leaves for
    // BW (net of what BI frees), for the backward's peaks below.
    std::vector<int64_t> kept_by_layer, gradients_by_layer, left_by_layer;
    int64_t loss_gradient_per_sample = 0;  // the last stage's
    for (int i = range.begin; i < range.end; ++i) {
      const LayerInfo& info = infos[i];
      ShardCost cost;
      int64_t kept = 0;  // this layer's kept bytes per sample, in the run's precision
      switch (roles[i]) {
        case TensorParallelRole::Replicated:
          cost = full_cost(info);
          // Under sequence parallelism a moe layer's stage keeps its input
          // slice; the layer keeps its whole-sequence routing (moe_layer.h).
          if (info.type == LayerType::Moe && split.sequence_parallel && tp > 1)
            cost.activation_bytes -= info.in_features * kBytesPerValue / tp * (tp - 1);
          break;
        case TensorParallelRole::Sharded: cost = sharded_elementwise_cost(info, tp); break;
        case TensorParallelRole::ColumnParallel:
        case TensorParallelRole::RowParallel:
          cost = linear_shard_cost(info, model.layers[i].bias, roles[i], tp);
          break;
        case TensorParallelRole::VocabParallel:
          cost = embedding_shard_cost(info, model.layers[i], tp, sequence_length(whole_model));
          break;
        case TensorParallelRole::BlockParallel: {
          if (!last_block || !(last_block->first == info.block))
            last_block.emplace(info.block, transformer_block_cost(info.block, split));
          const BlockCost& block = last_block->second;
          cost = {block.forward_flops,
                  block.backward_input_flops,
                  block.backward_weight_flops,
                  block.params,
                  0,
                  block.gemms};
          profile.forward_memory_bytes += block.forward_memory_values * bytes.activation * samples;
          profile.backward_memory_bytes += block.backward_memory_values * bytes.activation * samples;
          kept = block.kept.bytes(bytes.activation);
          largest_block_per_sample = std::max(largest_block_per_sample, kept);
          const int64_t input = block.input_values * bytes.activation;
          const bool starts_group = blocks_seen++ % group == 0;
          if (starts_group) {
            group_rebuilt_per_sample = kept - input;  // the input is the group's checkpoint
            if (i > range.begin) block_checkpoints_per_sample += input;
          } else {
            group_rebuilt_per_sample += kept;
          }
          largest_rebuilt_group_per_sample =
              std::max(largest_rebuilt_group_per_sample, group_rebuilt_per_sample);
          // The block's buffers, and its output gradient dy (received, or the
          // next layer's input gradient), which it holds as its input.
          gradients_by_layer.push_back((block.backward_working_values + block.input_values) *
                                       bytes.activation);
          left_by_layer.push_back((block.backward_kept_values + block.input_values) *
                                  bytes.activation);
          if (plan.cp > 1) add_context_parallel_exchanges(profile.context_parallel_exchanges, i, info.block, block,
                                                          split, microbatch_size, bytes.activation);
          break;
        }
      }
      if (roles[i] != TensorParallelRole::BlockParallel) {
        blocks_seen = 0;  // a layer that is not a block ends a group, as the executors group them
        kept = in_precision(cost.activation_bytes, info.type, bytes);
        other_layers_per_sample += kept;
        // Its input and output gradients, as this shard holds them (the
        // model's first layer computes no input gradient).
        const int64_t in_values = i == 0 ? 0 : info.in_features / shard_divisor(roles[i], tp, true);
        int64_t out_values = info.out_features / shard_divisor(roles[i], tp, false);
        int64_t gradient_values = in_values + out_values;
        if (roles[i] == TensorParallelRole::Replicated && info.type != LayerType::Moe) {
          // Under sequence parallelism a replicated layer between blocks (a
          // layer norm) takes and gives its gradients on the shard's slice.
          const int64_t in_split =
              i > 0 && output_splits_sequence(model, roles, i - 1, split.sequence_parallel) ? tp
                                                                                            : 1;
          const int64_t out_split =
              output_splits_sequence(model, roles, i, split.sequence_parallel) ? tp : 1;
          out_values /= out_split;
          gradient_values = in_values / in_split + out_values;
        } else if (info.type == LayerType::Moe) {
          // A moe layer's backward peaks in its experts' slot buffers
          // (moe_cost's working values) with the output gradient; the input
          // gradient comes after them. Under sequence parallelism the output
          // gradient is the stage's slice, and the layer gathers it and its
          // input again whole (moe_layer.h).
          const bool gathers = split.sequence_parallel;
          if (gathers) out_values /= tp;
          gradient_values = moe_cost(info.moe).backward_working_values + out_values +
                            (gathers ? info.in_features + info.out_features : 0);
        }
        gradients_by_layer.push_back(gradient_values * bytes.activation);
        // BI keeps a weighted layer's output gradient for BW and frees the
        // input of a layer without weights (stage_stack.h's backward_pass).
        left_by_layer.push_back(cost.params > 0 ? out_values * bytes.activation : -kept);
        // The model's output: the loss's gradient of it waits from F to B,
        // in float32 whatever the precision (Megatron-LM's cross-entropy casts
        // the logits to float32 and keeps their softmax for the backward; the
        // cuda backend's GEMMs write float32 logits and the loss reads them so).
        if (i + 1 == static_cast<int>(infos.size()))
          loss_gradient_per_sample = out_values * kLossValueBytes;
      }
      working_per_sample = std::max(working_per_sample, gradients_by_layer.back());
      kept_by_layer.push_back(kept);
      if (info.has_experts()) {
        // Each member of an expert-parallel group holds experts / ep of the experts.
        const int expert_tp = roles[i] == TensorParallelRole::BlockParallel ? tp : 1;
        const int64_t expert_params = moe_cost(info.moe, expert_tp).expert_params;
        cost.params -= expert_params / plan.ep * (plan.ep - 1);
        profile.expert_params += expert_params / plan.ep;
        if (plan.ep > 1)
          add_expert_all_to_alls(profile.expert_all_to_alls, i, info.moe, microbatch_size, bytes.activation);
      }
      profile.largest_layer_params = std::max(profile.largest_layer_params, cost.params);
      const LayerKernels kernels = layer_kernels(info, model.layers[i], plan.ep, plan.cp);
      profile.forward_kernels += kernels.forward;
      profile.backward_input_kernels += kernels.backward_input;
      profile.backward_weight_kernels += kernels.backward_weight;
      add_gemms(profile.forward_gemms, cost.gemms.forward, microbatch_size);
      add_gemms(profile.backward_input_gemms, cost.gemms.backward_input, microbatch_size);
      add_gemms(profile.backward_weight_gemms, cost.gemms.backward_weight, microbatch_size);
      profile.forward_flops += cost.forward_flops * samples;
      profile.backward_input_flops += cost.backward_input_flops * samples;
      profile.backward_weight_flops += cost.backward_weight_flops * samples;
      profile.params += cost.params;
      activation_bytes_per_sample += kept;
      if (plan.dp > 1) add_batch_statistics_allreduces(profile.batch_statistics_allreduces, i, model.layers[i], info);

      // With one shard there is nothing to combine.
      if (tp == 1) continue;
      if (split.sequence_parallel)
        profile.sequence_parallel_gradient_bytes +=
            sequence_partial_params(info, roles[i], cost.params) * bytes.gradient;
      const CollectiveContext context{tp,
                                      microbatch_size,
                                      bytes.activation,
                                      split.sequence_parallel,
                                      is_sequence_model(model),
                                      is_sequence_model(model) && i + 1 == static_cast<int>(infos.size())};
      add_tensor_parallel_collectives(profile.tp_allreduces, i, roles[i], info, context);
    }
    profile.activation_bytes = activation_bytes_per_sample * microbatch_size;
    profile.backward_working_bytes = working_per_sample * microbatch_size;
    // The backward runs the layers last first. B frees each layer's kept
    // activations when its backward ends, so while layer k runs the layers
    // after it hold nothing; BI instead leaves behind what BW reads.
    int64_t freed_after = 0, left_after = 0, backward_peak = 0, split_backward_peak = 0;
    for (size_t k = kept_by_layer.size(); k-- > 0;) {
      backward_peak = std::max(backward_peak, gradients_by_layer[k] - freed_after);
      split_backward_peak = std::max(split_backward_peak, gradients_by_layer[k] + left_after);
      freed_after += kept_by_layer[k];
      left_after += left_by_layer[k];
    }
    profile.backward_peak_bytes = backward_peak * microbatch_size;
    profile.split_backward_peak_bytes = split_backward_peak * microbatch_size;
    profile.split_backward_kept_bytes = left_after * microbatch_size;
    profile.loss_gradient_bytes = loss_gradient_per_sample * microbatch_size;
    // Stage 0's input is the data batch (float32 values or int32 token ids, as
    // loaded) and the last stage's output feeds the loss; both are filled in
    // the same way so every stage reads alike. Under sequence parallelism a
    // block hands the next stage its slice of the sequence.
    const auto boundary_split = [&](int layer) {
      return output_splits_sequence(model, roles, layer, split.sequence_parallel) ? tp : 1;
    };
    const int64_t value_bytes = range.begin == 0 ? kBytesPerValue : bytes.activation;
    profile.input_bytes =
        microbatch_size * infos[range.begin].in_features * value_bytes /
        (range.begin > 0 ? boundary_split(range.begin - 1) : 1);
    profile.output_bytes =
        microbatch_size * infos[range.end - 1].out_features * bytes.activation / boundary_split(range.end - 1);
    if (plan.recompute_blocks && largest_block_per_sample > 0) {
      // Blocks as the unit (Megatron-LM): the input of each group of
      // recompute_layers blocks is kept, the other layers' activations too,
      // and one group's rest is rebuilt at a time, in the forward as before
      // the backward.
      profile.recompute_kept_bytes =
          std::min(profile.input_bytes +
                       (block_checkpoints_per_sample + other_layers_per_sample) * microbatch_size,
                   profile.activation_bytes);
      profile.recompute_working_bytes =
          std::min(largest_rebuilt_group_per_sample * microbatch_size,
                   profile.activation_bytes - profile.recompute_kept_bytes);
      profile.recompute_forward_peak_bytes =
          profile.recompute_kept_bytes + profile.recompute_working_bytes;
    } else {
      // The stage as the unit (GPipe, and the executors): the forward holds
      // everything, keeps only the stage input, and the stage is rebuilt whole.
      profile.recompute_kept_bytes = std::min(profile.input_bytes, profile.activation_bytes);
      profile.recompute_working_bytes = profile.activation_bytes - profile.recompute_kept_bytes;
      profile.recompute_forward_peak_bytes = profile.activation_bytes;
    }
    profiles.push_back(profile);
  }
  return profiles;
}

BlockSplit block_split(const ParallelPlan& plan) {
  return {plan.tp, plan.sequence_parallel && plan.tp > 1, plan.selective_recompute, plan.cp};
}

}  // namespace pipelab
