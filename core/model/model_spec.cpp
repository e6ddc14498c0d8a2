#include "core/model/model_spec.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "core/model/image_layers.h"
#include "core/model/model_limits.h"
#include "core/text/number_text.h"

namespace pipelab {
namespace {

// Every tensor is float32.
constexpr int64_t kBytesPerValue = 4;

struct LayerTypeEntry {
  LayerType type;
  const char* name;
};

constexpr std::array<LayerTypeEntry, 17> kLayerTypes = {{
    {LayerType::Linear, "linear"},
    {LayerType::Relu, "relu"},
    {LayerType::Gelu, "gelu"},
    {LayerType::Tanh, "tanh"},
    {LayerType::Sigmoid, "sigmoid"},
    {LayerType::LayerNorm, "layernorm"},
    {LayerType::Dropout, "dropout"},
    {LayerType::Embedding, "embedding"},
    {LayerType::TransformerBlock, "transformer_block"},
    {LayerType::Conv2d, "conv2d"},
    {LayerType::MaxPool, "maxpool"},
    {LayerType::AvgPool, "avgpool"},
    {LayerType::GlobalAvgPool, "global_avgpool"},
    {LayerType::Flatten, "flatten"},
    {LayerType::BatchNorm, "batchnorm"},
    {LayerType::ResidualBlock, "residual_block"},
    {LayerType::Moe, "moe"},
}};


// FLOPs per element of the elementwise layers (and layernorm), counted the way
// a straightforward kernel spends them. They only need to be the right size
// relative to a linear layer's 2*in*out, so round numbers are used:
//   relu      forward: 1 compare;            backward: 1 select
//   gelu      forward: ~8 (tanh approximation: cube, scale, tanh, blend);
//             backward: ~12 (the derivative of the same formula, times the gradient)
//   tanh      forward: ~4 (exp-based);       backward: 2 (g * (1 - y*y))
//   sigmoid   forward: ~4 (exp, add, divide); backward: 3 (g * y * (1 - y))
//   layernorm forward: ~8 (mean, variance, normalise, scale, shift);
//             backward input: ~10 (two reductions plus the normalised combination);
//             backward weight: 3 (dgamma += g * xhat, dbeta += g)
//   dropout   forward: 2 (draw and apply the mask); backward: 1 (apply the mask)
struct ElementwiseFlops {
  double forward;
  double backward_input;
  double backward_weight;
};

ElementwiseFlops elementwise_flops(LayerType type) {
  switch (type) {
    case LayerType::Relu: return {1, 1, 0};
    case LayerType::Gelu: return {8, 12, 0};
    case LayerType::Tanh: return {4, 2, 0};
    case LayerType::Sigmoid: return {4, 3, 0};
    case LayerType::LayerNorm: return {8, 10, 3};
    case LayerType::Dropout: return {2, 1, 0};
    default: break;  // the other layers are described by their own functions
  }
  return {0, 0, 0};
}

std::string layer_label(int index) { return "model.layers[" + std::to_string(index) + "]"; }

// A linear applies to each of the sample's `tokens` positions (one for an MLP).
LayerInfo describe_linear(const LayerSpec& spec, int64_t in, int64_t tokens) {
  LayerInfo info;
  info.in_features = in * tokens;
  info.out_features = spec.out * tokens;
  const double matmul_flops = 2.0 * static_cast<double>(in) * static_cast<double>(spec.out) *
                              static_cast<double>(tokens);
  const double bias_flops = spec.bias ? static_cast<double>(spec.out * tokens) : 0.0;
  info.params = in * spec.out + (spec.bias ? spec.out : 0);
  info.forward_flops = matmul_flops + bias_flops;      // x W^T (+ b)
  info.backward_input_flops = matmul_flops;            // g W
  info.backward_weight_flops = matmul_flops + bias_flops;  // g^T x (+ sum of g for the bias)
  info.activation_bytes = info.in_features * kBytesPerValue;  // the input, for the weight gradient
  return info;
}

LayerInfo describe_elementwise(const LayerSpec& spec, int64_t width, int64_t tokens) {
  LayerInfo info;
  info.in_features = width * tokens;
  info.out_features = width * tokens;
  const ElementwiseFlops flops = elementwise_flops(spec.type);
  const double elements = static_cast<double>(width * tokens);
  info.forward_flops = flops.forward * elements;
  info.backward_input_flops = flops.backward_input * elements;
  info.backward_weight_flops = flops.backward_weight * elements;
  switch (spec.type) {
    case LayerType::LayerNorm:
      info.params = 2 * width;  // gamma and beta, shared by every position
      // The input only: the backward recomputes each position's mean and
      // reciprocal standard deviation from it (layer_norm.h, on every backend).
      info.activation_bytes = width * tokens * kBytesPerValue;
      break;
    case LayerType::Dropout:
      info.activation_bytes = width * tokens;  // the keep mask, one byte per element
      break;
    default:
      // relu/gelu/tanh/sigmoid keep their input (or output) to form the derivative.
      info.activation_bytes = width * tokens * kBytesPerValue;
      break;
  }
  return info;
}

// Token lookup plus a learned position embedding (none under rope): forward
// and the weight gradient touch each position's `dim` values once (a gather,
// a scatter-add).
LayerInfo describe_embedding(const LayerSpec& spec, int64_t tokens) {
  LayerInfo info;
  info.in_features = tokens;
  info.out_features = tokens * spec.dim;
  info.params = (spec.vocab + (spec.position == PositionEncoding::Rope ? 0 : tokens)) * spec.dim;
  info.forward_flops = static_cast<double>(tokens * spec.dim);
  info.backward_weight_flops = 2.0 * static_cast<double>(tokens * spec.dim);
  info.activation_bytes = tokens * kBytesPerValue;  // the ids, for the scatter-add
  return info;
}

LayerInfo describe_block(const TransformerBlockShape& shape) {
  LayerInfo info;
  info.in_features = shape.tokens * shape.dim;
  info.out_features = info.in_features;
  info.block = shape;
  if (shape.has_experts()) info.moe = shape.moe();
  const BlockCost cost = transformer_block_cost(shape, BlockSplit{});
  info.params = cost.params;
  info.forward_flops = cost.forward_flops;
  info.backward_input_flops = cost.backward_input_flops;
  info.backward_weight_flops = cost.backward_weight_flops;
  info.activation_bytes = cost.kept.bytes(kBytesPerValue);
  return info;
}

// The most values one sample may hold in a layer: positions x width.
int64_t values_per_sample_limit(int64_t tokens) { return tokens > 1 ? kMaxSequenceValues : kMaxWidth; }

void check_width(const std::string& label, const char* field, int64_t value) {
  if (value < 1)
    throw std::invalid_argument(label + ": " + field + " must be >= 1, got " + std::to_string(value));
  if (value > kMaxWidth)
    throw std::invalid_argument(label + ": " + field + " = " + std::to_string(value) + " is more than the " +
                                std::to_string(kMaxWidth) + " PipeLab handles; use a smaller " + field);
}

}  // namespace

MoeShape moe_shape(const LayerSpec& spec, int64_t dim, int64_t tokens, const std::string& label) {
  const std::string type = layer_type_name(spec.type);
  if (spec.experts < 1)
    throw std::invalid_argument(label + ": " + type + " needs experts >= 1, got " +
                                std::to_string(spec.experts) +
                                "; give the number of experts, e.g. \"experts\": 4");
  check_width(label, "experts", spec.experts);
  if (spec.top_k < 1 || spec.top_k > spec.experts)
    throw std::invalid_argument(label + ": " + type + " top_k = " + std::to_string(spec.top_k) +
                                " must be in [1, experts = " + std::to_string(spec.experts) +
                                "]; use 1 (Switch) or 2 (GShard), or add experts");
  if (!(spec.capacity_factor > 0.0 && spec.capacity_factor <= 1e6))
    throw std::invalid_argument(label + ": " + type +
                                " capacity_factor must be > 0 (e.g. 1.25), got " +
                                std::to_string(spec.capacity_factor));
  if (!(spec.aux_loss_weight >= 0.0 && spec.aux_loss_weight <= 1e6))
    throw std::invalid_argument(label + ": " + type +
                                " aux_loss_weight must be >= 0 (e.g. 0.01), got " +
                                std::to_string(spec.aux_loss_weight));
  if (spec.ffn < 0)
    throw std::invalid_argument(label + ": ffn must be >= 1 (or 0 for 4 x the width), got " +
                                std::to_string(spec.ffn));
  MoeShape shape;
  shape.tokens = tokens;
  shape.dim = dim;
  shape.experts = spec.experts;
  shape.top_k = spec.top_k;
  shape.ffn = spec.ffn > 0 ? spec.ffn : 4 * dim;
  shape.capacity_factor = spec.capacity_factor;
  check_width(label, "ffn", shape.ffn);
  if (shape.ffn > values_per_sample_limit(tokens) / tokens || shape.experts > values_per_sample_limit(tokens) / tokens)
    throw std::invalid_argument(
        label + ": " + type + " ffn or experts x sequence length is more than the " +
        std::to_string(values_per_sample_limit(tokens)) +
        " values per sample PipeLab handles; use a smaller ffn or fewer experts");
  return shape;
}

namespace {

LayerInfo describe_moe(const MoeShape& shape) {
  LayerInfo info;
  info.in_features = shape.tokens * shape.dim;
  info.out_features = info.in_features;
  info.moe = shape;
  const MoeCost cost = moe_cost(shape);
  info.params = cost.params;
  info.forward_flops = cost.forward_flops;
  info.backward_input_flops = cost.backward_input_flops;
  info.backward_weight_flops = cost.backward_weight_flops;
  // The layer input (for the gate's weight gradient) and what the routing keeps.
  info.activation_bytes = (info.in_features + cost.kept_values) * kBytesPerValue;
  return info;
}

// The block's shape from its spec and the width reaching it, with every
// constraint a user can break named.
TransformerBlockShape block_shape(const LayerSpec& spec, int64_t dim, int64_t tokens, bool rotary,
                                  const std::string& label) {
  if (spec.heads < 1)
    throw std::invalid_argument(label + ": transformer_block needs heads >= 1, got " + std::to_string(spec.heads));
  if (spec.kv_heads < 0 || spec.kv_heads > spec.heads || (spec.kv_heads > 0 && spec.heads % spec.kv_heads != 0))
    throw std::invalid_argument(label + ": kv_heads = " + std::to_string(spec.kv_heads) +
                                " must divide heads = " + std::to_string(spec.heads) +
                                " (grouped-query attention shares each key/value head among heads / kv_heads "
                                "query heads); use a divisor of heads (1: multi-query), or 0 for kv_heads = heads");
  if (dim % spec.heads != 0)
    throw std::invalid_argument(label + ": heads = " + std::to_string(spec.heads) +
                                " does not divide the block's width " + std::to_string(dim) +
                                "; choose heads that divide it (e.g. " + std::to_string(dim / 64 > 0 ? dim / 64 : 1) +
                                ") or change the embedding's dim");
  if (spec.ffn < 0)
    throw std::invalid_argument(label + ": ffn must be >= 1 (or 0 for 4 x the width), got " +
                                std::to_string(spec.ffn));
  if (!(spec.dropout >= 0.0 && spec.dropout < 1.0))
    throw std::invalid_argument(label + ": dropout must be in [0, 1), got " + std::to_string(spec.dropout));
  TransformerBlockShape shape;
  shape.tokens = tokens;
  shape.dim = dim;
  shape.heads = spec.heads;
  shape.kv_heads = spec.kv_heads > 0 ? spec.kv_heads : spec.heads;
  shape.rotary = rotary;
  shape.ffn = spec.ffn > 0 ? spec.ffn : 4 * dim;
  check_width(label, "ffn", shape.ffn);
  if (shape.ffn > values_per_sample_limit(tokens) / tokens)
    throw std::invalid_argument(label + ": ffn x sequence length = " + std::to_string(shape.ffn) + " x " +
                                std::to_string(tokens) + " is more than the " + std::to_string(values_per_sample_limit(tokens)) +
                                " values per sample PipeLab handles; use a smaller ffn or model.input");
  // heads x tokens <= dim x tokens <= kMaxSequenceValues, so this product cannot overflow.
  if (tokens > kMaxMicrobatchBytes / (spec.heads * tokens))
    throw std::invalid_argument(label + ": heads x sequence length^2 = " + std::to_string(spec.heads) + " x " +
                                std::to_string(tokens) + "^2 attention scores per sample is more than the " +
                                std::to_string(kMaxMicrobatchBytes) +
                                " PipeLab handles; use a shorter sequence (model.input) or fewer heads");
  shape.norm = spec.norm;
  shape.activation = spec.activation;
  shape.bias = spec.bias;
  shape.dropout = spec.dropout > 0.0;
  if (spec.experts < 0)
    throw std::invalid_argument(label +
                                ": transformer_block experts must be >= 0 (0: a dense MLP), got " +
                                std::to_string(spec.experts));
  if (spec.experts > 0) {
    if (spec.activation != BlockActivation::Gelu)
      throw std::invalid_argument(label +
                                  ": a transformer_block with experts has GELU experts; set "
                                  "activation = gelu, or experts = 0 for a SwiGLU MLP");
    const MoeShape moe = moe_shape(spec, dim, tokens, label);
    shape.experts = moe.experts;
    shape.top_k = moe.top_k;
    shape.capacity_factor = moe.capacity_factor;
  }
  return shape;
}

}  // namespace

const char* layer_type_name(LayerType type) {
  for (const auto& entry : kLayerTypes)
    if (entry.type == type) return entry.name;
  return "?";
}

std::optional<LayerType> parse_layer_type(const std::string& name) {
  for (const auto& entry : kLayerTypes)
    if (name == entry.name) return entry.type;
  return std::nullopt;
}

std::vector<std::string> layer_type_names() {
  std::vector<std::string> names;
  for (const auto& entry : kLayerTypes) names.emplace_back(entry.name);
  return names;
}

bool needs_image(LayerType type) {
  return type == LayerType::Conv2d || type == LayerType::MaxPool || type == LayerType::AvgPool ||
         type == LayerType::GlobalAvgPool || type == LayerType::ResidualBlock;
}

bool is_image_layer(LayerType type) {
  return needs_image(type) || type == LayerType::Flatten || type == LayerType::BatchNorm;
}

Window layer_window(const LayerSpec& spec) {
  if (spec.type == LayerType::ResidualBlock) return {3, spec.stride, 1};
  return {spec.kernel, spec.stride, spec.padding};
}

ImageShape input_image(const ModelSpec& model) {
  if (model.input.size() != 3) return {};
  const ImageShape image{model.input[0], model.input[1], model.input[2]};
  return image.valid() ? image : ImageShape{};
}

const char* norm_type_name(NormType type) { return type == NormType::RmsNorm ? "rmsnorm" : "layernorm"; }

std::optional<NormType> parse_norm_type(const std::string& name) {
  if (name == "layernorm") return NormType::LayerNorm;
  if (name == "rmsnorm") return NormType::RmsNorm;
  return std::nullopt;
}

std::vector<std::string> norm_type_names() { return {"layernorm", "rmsnorm"}; }

const char* position_encoding_name(PositionEncoding position) {
  return position == PositionEncoding::Rope ? "rope" : "learned";
}

std::optional<PositionEncoding> parse_position_encoding(const std::string& name) {
  if (name == "learned") return PositionEncoding::Learned;
  if (name == "rope") return PositionEncoding::Rope;
  return std::nullopt;
}

std::vector<std::string> position_encoding_names() { return {"learned", "rope"}; }

const char* block_activation_name(BlockActivation activation) {
  return activation == BlockActivation::SwiGlu ? "swiglu" : "gelu";
}

std::optional<BlockActivation> parse_block_activation(const std::string& name) {
  if (name == "gelu") return BlockActivation::Gelu;
  if (name == "swiglu") return BlockActivation::SwiGlu;
  return std::nullopt;
}

std::vector<std::string> block_activation_names() { return {"gelu", "swiglu"}; }

const char* loss_type_name(LossType type) {
  return type == LossType::CrossEntropy ? "cross_entropy" : "mse";
}

std::optional<LossType> parse_loss_type(const std::string& name) {
  if (name == "cross_entropy") return LossType::CrossEntropy;
  if (name == "mse") return LossType::Mse;
  return std::nullopt;
}

std::vector<std::string> loss_type_names() { return {"cross_entropy", "mse"}; }

int64_t input_features(const ModelSpec& model) {
  if (model.input.empty()) return 0;  // no shape given: not a usable model
  int64_t width = 1;
  for (int64_t dim : model.input) {
    if (dim < 1) return 0;                              // not a usable shape either
    if (width > kMaxWidth / dim) return kMaxWidth + 1;  // too wide; stops before overflowing
    width *= dim;
  }
  return width;
}

std::vector<LayerInfo> describe_layers(const ModelSpec& model) {
  if (model.input.empty())
    throw std::invalid_argument("model.input is empty; give the input shape per sample, e.g. [784]");
  for (size_t d = 0; d < model.input.size(); ++d) {
    if (model.input[d] < 1)
      throw std::invalid_argument("model.input[" + std::to_string(d) + "] = " +
                                  std::to_string(model.input[d]) + "; every dimension must be >= 1");
  }
  if (model.layers.empty())
    throw std::invalid_argument("model.layers is empty; add at least one layer, e.g. {\"type\": \"linear\", \"out\": 10}");
  if (model.layers.size() > static_cast<size_t>(kMaxLayers))
    throw std::invalid_argument("model.layers has " + std::to_string(model.layers.size()) +
                                " layers, more than the " + std::to_string(kMaxLayers) +
                                " PipeLab handles; use fewer layers");
  if (input_features(model) > kMaxWidth)
    throw std::invalid_argument("model.input's dimensions multiply to more than " +
                                std::to_string(kMaxWidth) +
                                " values per sample, more than PipeLab handles; use a smaller input shape");

  const bool sequence = is_sequence_model(model);
  if (sequence && model.input.size() != 1)
    throw std::invalid_argument("model.input has " + std::to_string(model.input.size()) +
                                " dimensions, but a model that starts with an embedding reads token ids: "
                                "give the sequence length alone, e.g. \"input\": [128]");
  const int64_t tokens = sequence_length(model);

  std::vector<LayerInfo> infos;
  infos.reserve(model.layers.size());
  // Values per position: the whole sample for an MLP, one token's for a sequence model.
  int64_t width = sequence ? 1 : input_features(model);
  // The image the values form, while they still do (image_shape.h).
  ImageShape image = sequence ? ImageShape{} : input_image(model);
  int64_t parameters = 0;
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const LayerSpec& spec = model.layers[i];
    const int index = static_cast<int>(i);
    const std::string label = layer_label(index);
    LayerInfo info;
    if (is_image_layer(spec.type)) {
      if (sequence)
        throw std::invalid_argument(label + ": " + layer_type_name(spec.type) +
                                    " works on images or feature vectors, not on token sequences; in a model "
                                    "that starts with an embedding use layernorm and transformer_block");
      info = describe_image_layer(spec, image, width, label);
    } else if (spec.type == LayerType::Embedding) {
      if (index != 0)
        throw std::invalid_argument(label + ": an embedding reads token ids, so it must be the first layer; "
                                    "move it to model.layers[0]");
      check_width(label, "vocab", spec.vocab);
      if (!(spec.rope_theta > 0 && std::isfinite(spec.rope_theta)))
        throw std::invalid_argument(
            label +
            ": rope_theta is the rotary embeddings' base and must be a positive "
            "number (LLaMA 2: 10000, LLaMA 3: 500000), got " +
            number_text(spec.rope_theta));
      if (spec.position != PositionEncoding::Rope && spec.rope_theta != kDefaultRopeTheta)
        throw std::invalid_argument(
            label +
            ": rope_theta applies to rotary positions only; add \"position\": "
            "\"rope\" or remove rope_theta");
      check_width(label, "dim", spec.dim);
      if (spec.dim > values_per_sample_limit(tokens) / tokens)
        throw std::invalid_argument(label + ": dim x sequence length = " + std::to_string(spec.dim) + " x " +
                                    std::to_string(tokens) + " is more than the " + std::to_string(values_per_sample_limit(tokens)) +
                                    " values per sample PipeLab handles; use a smaller dim or model.input");
      info = describe_embedding(spec, tokens);
    } else if (spec.type == LayerType::TransformerBlock) {
      if (!sequence)
        throw std::invalid_argument(label + ": a transformer_block works on token sequences; start the model "
                                    "with an embedding ({\"type\": \"embedding\", \"vocab\": 256, \"dim\": 128}) "
                                    "and give model.input = [sequence length]");
      const bool rotary = model.layers.front().position == PositionEncoding::Rope;
      info = describe_block(block_shape(spec, width, tokens, rotary, label));
    } else if (spec.type == LayerType::Moe) {
      if (image.valid())
        throw std::invalid_argument(label + ": moe routes feature vectors or tokens, not images; put a flatten "
                                    "or global_avgpool before it");
      info = describe_moe(moe_shape(spec, width, tokens, label));
    } else if (spec.type == LayerType::Linear) {
      if (spec.out < 1)
        throw std::invalid_argument(label + ": linear needs out >= 1, got " + std::to_string(spec.out));
      if (spec.out > values_per_sample_limit(tokens) / tokens)
        throw std::invalid_argument(label + ": linear out = " + std::to_string(spec.out) +
                                    (tokens > 1 ? " (x " + std::to_string(tokens) + " positions)" : std::string()) +
                                    " is more than the " + std::to_string(values_per_sample_limit(tokens)) +
                                    " values per sample PipeLab handles; use a smaller out");
      info = describe_linear(spec, width, tokens);
    } else {
      if (spec.type == LayerType::Dropout && !(spec.p >= 0.0 && spec.p < 1.0))
        throw std::invalid_argument(label + ": dropout needs p in [0, 1), got " + std::to_string(spec.p));
      info = describe_elementwise(spec, width, tokens);
    }
    // Elementwise layers keep an image an image; a linear flattens it.
    if (!is_image_layer(spec.type)) {
      info.image_in = image;
      info.image_out = spec.type == LayerType::Linear ? ImageShape{} : image;
    }
    image = info.image_out;
    info.index = index;
    info.type = spec.type;
    info.tokens = tokens;
    info.output_bytes = info.out_features * kBytesPerValue;
    width = info.token_out();
    // Widths are at most 2^30, so one layer's params fit; their sum is checked as it grows.
    parameters += info.params;
    if (parameters > kMaxParameters)
      throw std::invalid_argument("the layers up to " + layer_label(index) + " hold more than " +
                                  std::to_string(kMaxParameters) +
                                  " parameters, more than PipeLab handles; use narrower or fewer linear layers");
    infos.push_back(info);
  }
  return infos;
}

bool has_experts(const LayerSpec& spec) {
  return spec.type == LayerType::Moe ||
         (spec.type == LayerType::TransformerBlock && spec.experts > 0);
}

bool model_has_experts(const ModelSpec& model) {
  return std::any_of(model.layers.begin(), model.layers.end(),
                     [](const LayerSpec& layer) { return has_experts(layer); });
}

int64_t output_features(const ModelSpec& model) {
  const bool has_image_layers = std::any_of(model.layers.begin(), model.layers.end(),
                                            [](const LayerSpec& layer) { return is_image_layer(layer.type); });
  if (has_image_layers) {
    // Convolutions and pools change the width: only the whole description knows it.
    try {
      const std::vector<LayerInfo> infos = describe_layers(model);
      return infos.back().out_features;
    } catch (const std::invalid_argument&) {
      return 0;  // not a usable model
    }
  }
  const int64_t tokens = sequence_length(model);
  int64_t width = input_features(model);
  for (const LayerSpec& layer : model.layers) {
    if (layer.type == LayerType::Linear) width = layer.out * tokens;
    if (layer.type == LayerType::Embedding) width = layer.dim * tokens;
  }
  return width;
}

bool is_sequence_model(const ModelSpec& model) {
  return !model.layers.empty() && model.layers.front().type == LayerType::Embedding;
}

int64_t sequence_length(const ModelSpec& model) {
  return is_sequence_model(model) && !model.input.empty() ? model.input.front() : 1;
}

int count_linear_layers(const ModelSpec& model) {
  int count = 0;
  for (const LayerSpec& layer : model.layers)
    if (layer.type == LayerType::Linear) ++count;
  return count;
}

}  // namespace pipelab
