#include "core/nn/stack_layout.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

std::string layer_name(int index, LayerType type) {
  return "layer " + std::to_string(index) + " (" + layer_type_name(type) + ")";
}

bool is_elementwise(LayerType type) {
  return type == LayerType::Relu || type == LayerType::Gelu || type == LayerType::Tanh ||
         type == LayerType::Sigmoid || type == LayerType::Dropout;
}

// The roles of the model's layers, checked against their types. All
// Replicated without tensor parallelism.
std::vector<TensorParallelRole> checked_roles(const ModelSpec& model,
                                              const TensorParallelShard& tp) {
  const size_t count = model.layers.size();
  if (tp.degree < 1)
    throw std::invalid_argument("parallel.tp must be >= 1, got " + std::to_string(tp.degree));
  if (tp.shard < 0 || tp.shard >= tp.degree)
    throw std::invalid_argument("tensor-parallel shard " + std::to_string(tp.shard) +
                                " is outside [0, " + std::to_string(tp.degree) + ")");
  if (tp.degree == 1) return std::vector<TensorParallelRole>(count, TensorParallelRole::Replicated);
  if (tp.roles.size() != count)
    throw std::invalid_argument("tensor parallelism needs one role per model layer (" +
                                std::to_string(count) + "), got " +
                                std::to_string(tp.roles.size()) + "; use tensor_parallel_roles");
  if (!tp.has_all_reduce)
    throw std::invalid_argument("tensor parallelism (tp = " + std::to_string(tp.degree) +
                                ") needs an all_reduce function");
  for (size_t i = 0; i < count; ++i) {
    const LayerType type = model.layers[i].type;
    const TensorParallelRole role = tp.roles[i];
    const bool linear_role =
        role == TensorParallelRole::ColumnParallel || role == TensorParallelRole::RowParallel;
    if ((linear_role && type != LayerType::Linear) ||
        (role == TensorParallelRole::Sharded && !is_elementwise(type)) ||
        (role == TensorParallelRole::VocabParallel && type != LayerType::Embedding) ||
        (role == TensorParallelRole::BlockParallel && type != LayerType::TransformerBlock))
      throw std::invalid_argument(
          layer_name(static_cast<int>(i), type) +
          " cannot take the tensor-parallel role it was given; use tensor_parallel_roles");
  }
  return {tp.roles.begin(), tp.roles.end()};
}

// Fills in the shard's widths, weight blocks and feature offset of `layer`,
// whose full widths and role are set.
void place_on_shard(LayerLayout& layer, const TensorParallelShard& tp) {
  if (layer.spec.type == LayerType::Linear) {
    // A linear in a sequence model is applied per position: its weight is per token.
    layer.weight =
        linear_weight_slice(layer.role, layer.token_in(), layer.token_out(), tp.degree, tp.shard);
    layer.bias = linear_bias_slice(layer.role, layer.token_out(), tp.degree, tp.shard);
    layer.in = layer.weight.rows * layer.tokens;
    layer.out = layer.weight.cols * layer.tokens;
    return;
  }
  if (layer.role == TensorParallelRole::VocabParallel ||
      layer.role == TensorParallelRole::BlockParallel) {
    // Whole activations in and out; the layer splits its own weights.
    layer.in = layer.full_in;
    layer.out = layer.full_out;
    layer.tp = tp.degree;
    layer.shard = tp.shard;
    return;
  }
  if (layer.spec.type == LayerType::Embedding || layer.spec.type == LayerType::TransformerBlock ||
      is_image_layer(layer.spec.type)) {
    layer.in = layer.full_in;
    layer.out = layer.full_out;
    return;
  }
  // Between a column- and a row-parallel linear, elementwise layers see this
  // shard's features [offset, offset + local).
  layer.in = layer.out = layer.full_out;
  if (layer.role == TensorParallelRole::Sharded) {
    if (layer.full_out % tp.degree != 0)
      throw std::invalid_argument("tp = " + std::to_string(tp.degree) +
                                  " does not divide the width " + std::to_string(layer.full_out) +
                                  " of " + layer_name(layer.index, layer.spec.type));
    layer.in = layer.out = layer.full_out / tp.degree;
    layer.feature_offset = layer.out * tp.shard;
  }
}

// Under sequence parallelism (stack_layout.h): which slice of the sequence
// `layer` holds, once place_on_shard has set its widths.
void split_sequence(LayerLayout& layer, const TensorParallelShard& tp) {
  const int degree = tp.degree;
  if (layer.context_tokens() % degree != 0)
    throw std::invalid_argument(
        "tp = " + std::to_string(degree) + " does not divide the sequence length " +
        std::to_string(layer.context_tokens()) +
        ", which parallel.sequence_parallel splits; choose a tp that divides it");
  switch (layer.role) {
    case TensorParallelRole::ColumnParallel:  // its input is a slice; its output every position
      layer.gathers_sequence = true;
      layer.sequence_shards = degree;
      layer.sequence_shard = tp.shard;
      layer.in /= degree;
      return;
    case TensorParallelRole::RowParallel:
    case TensorParallelRole::Sharded:
      throw std::invalid_argument(layer_name(layer.index, layer.spec.type) +
                                  " sits in a tensor-parallel linear pair, which sequence parallelism does not "
                                  "split; keep linear layers to the output layer, or set "
                                  "parallel.sequence_parallel = false");
    default:
      break;
  }
  layer.sequence_shards = degree;
  layer.sequence_shard = tp.shard;
  layer.out /= degree;
  if (layer.spec.type != LayerType::Embedding) layer.in /= degree;  // an embedding reads every id
  if (layer.spec.type == LayerType::Dropout) layer.feature_offset = layer.out * tp.shard;
}

// Under context parallelism (stack_layout.h): every layer of a sequence model
// holds the rank's positions only, once place_on_shard has set its widths.
void split_context(LayerLayout& layer, const TensorParallelShard& tp) {
  if (tp.context < 0 || tp.context >= tp.cp)
    throw std::invalid_argument("context rank " + std::to_string(tp.context) + " of cp = " +
                                std::to_string(tp.cp) + " does not exist; need 0 <= rank < cp");
  if (layer.tokens % (2 * tp.cp) != 0)
    throw std::invalid_argument("parallel.cp = " + std::to_string(tp.cp) +
                                " cuts each sequence into 2 x cp equal chunks, but its " +
                                std::to_string(layer.tokens) + " tokens do not divide into " +
                                std::to_string(2 * tp.cp) +
                                "; choose a cp (or a sequence length) that fits");
  layer.cp = tp.cp;
  layer.context = tp.context;
  layer.in /= tp.cp;
  layer.out /= tp.cp;
}

}  // namespace

std::vector<LayerLayout> stack_layout(const ModelSpec& model, int begin, int end,
                                      const TensorParallelShard& tp) {
  const int count = static_cast<int>(model.layers.size());
  if (begin < 0 || begin >= end || end > count)
    throw std::invalid_argument(
        "stage layer range [" + std::to_string(begin) + ", " + std::to_string(end) +
        ") must be non-empty and inside the model's " + std::to_string(count) + " layers");
  for (int64_t dim : model.input)
    if (dim <= 0)
      throw std::invalid_argument("model.input dimensions must be > 0, got " + std::to_string(dim));
  if (input_features(model) <= 0)
    throw std::invalid_argument(
        "model.input is empty; give the per-sample input shape, e.g. [784]");
  const bool sequence = is_sequence_model(model);
  // Widths are tracked per position: a sequence model's input is one token id each.
  const int64_t tokens = sequence ? sequence_length(model) : 1;
  int64_t width = input_features(model) / tokens;

  const std::vector<TensorParallelRole> roles = checked_roles(model, tp);
  // Image layers change widths in ways only the model's description knows
  // (and it checks their windows); flat models are followed here.
  const bool has_image_layers = std::any_of(model.layers.begin(), model.layers.end(),
                                            [](const LayerSpec& layer) { return is_image_layer(layer.type); });
  const std::vector<LayerInfo> infos = has_image_layers ? describe_layers(model) : std::vector<LayerInfo>{};

  std::vector<LayerLayout> layout;
  // Widths follow from the input through every layer before the stage too.
  for (int i = 0; i < end; ++i) {
    const LayerSpec& spec = model.layers[i];
    const int64_t in = width;
    if (spec.type == LayerType::Linear) {
      if (spec.out <= 0)
        throw std::invalid_argument(layer_name(i, spec.type) + ": out must be > 0, got " +
                                    std::to_string(spec.out));
      width = spec.out;
    } else if (spec.type == LayerType::Embedding) {
      if (i != 0)
        throw std::invalid_argument(layer_name(i, spec.type) +
                                    " must be the model's first layer; move it to the top");
      if (spec.vocab <= 0 || spec.dim <= 0)
        throw std::invalid_argument(layer_name(i, spec.type) + ": vocab (" +
                                    std::to_string(spec.vocab) + ") and dim (" +
                                    std::to_string(spec.dim) + ") must both be > 0");
      width = spec.dim;
    } else if (spec.type == LayerType::TransformerBlock && !sequence) {
      throw std::invalid_argument(layer_name(i, spec.type) +
                                  " reads token positions; start the model with an embedding");
    } else if (is_image_layer(spec.type)) {
      width = infos[static_cast<size_t>(i)].out_features;
    }
    if (i < begin) continue;

    LayerLayout layer;
    layer.index = i;
    layer.spec = spec;
    layer.role = roles[i];
    layer.tokens = tokens;
    layer.rotary = sequence && model.layers.front().position == PositionEncoding::Rope;
    layer.rotary_theta = model.layers.front().rope_theta;
    layer.full_in = in * tokens;
    layer.full_out = width * tokens;
    if (has_image_layers) layer.image_in = infos[static_cast<size_t>(i)].image_in;
    place_on_shard(layer, tp);
    if (tp.cp > 1 && sequence) split_context(layer, tp);
    if (tp.sequence_parallel && tp.degree > 1 && sequence) split_sequence(layer, tp);
    if (!layout.empty() && layer.in != layout.back().out)
      throw std::invalid_argument(
          layer_name(i, spec.type) + " takes " + std::to_string(layer.in) +
          " features per shard but receives " + std::to_string(layout.back().out) +
          ": the tensor-parallel roles do not pair up; use tensor_parallel_roles");
    layout.push_back(layer);
  }
  return layout;
}

}  // namespace pipelab
