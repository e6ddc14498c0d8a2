#include "core/model/model_spec.h"

#include <array>
#include <stdexcept>

#include "core/model/model_limits.h"

namespace pipelab {
namespace {

// Every tensor is float32.
constexpr int64_t kBytesPerValue = 4;

struct LayerTypeEntry {
  LayerType type;
  const char* name;
};

constexpr std::array<LayerTypeEntry, 7> kLayerTypes = {{
    {LayerType::Linear, "linear"},
    {LayerType::Relu, "relu"},
    {LayerType::Gelu, "gelu"},
    {LayerType::Tanh, "tanh"},
    {LayerType::Sigmoid, "sigmoid"},
    {LayerType::LayerNorm, "layernorm"},
    {LayerType::Dropout, "dropout"},
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
    case LayerType::Linear: break;
  }
  return {0, 0, 0};
}

std::string layer_label(int index) { return "model.layers[" + std::to_string(index) + "]"; }

LayerInfo describe_linear(const LayerSpec& spec, int64_t in) {
  LayerInfo info;
  info.in_features = in;
  info.out_features = spec.out;
  const double matmul_flops = 2.0 * static_cast<double>(in) * static_cast<double>(spec.out);
  const double bias_flops = spec.bias ? static_cast<double>(spec.out) : 0.0;
  info.params = in * spec.out + (spec.bias ? spec.out : 0);
  info.forward_flops = matmul_flops + bias_flops;      // x W^T (+ b)
  info.backward_input_flops = matmul_flops;            // g W
  info.backward_weight_flops = matmul_flops + bias_flops;  // g^T x (+ sum of g for the bias)
  info.activation_bytes = in * kBytesPerValue;         // the input, for the weight gradient
  return info;
}

LayerInfo describe_elementwise(const LayerSpec& spec, int64_t width) {
  LayerInfo info;
  info.in_features = width;
  info.out_features = width;
  const ElementwiseFlops flops = elementwise_flops(spec.type);
  const double elements = static_cast<double>(width);
  info.forward_flops = flops.forward * elements;
  info.backward_input_flops = flops.backward_input * elements;
  info.backward_weight_flops = flops.backward_weight * elements;
  switch (spec.type) {
    case LayerType::LayerNorm:
      info.params = 2 * width;  // gamma and beta
      // The input, plus the per-sample mean and reciprocal standard deviation.
      info.activation_bytes = width * kBytesPerValue + 2 * kBytesPerValue;
      break;
    case LayerType::Dropout:
      info.activation_bytes = width;  // the keep mask, one byte per element
      break;
    default:
      // relu/gelu/tanh/sigmoid keep their input (or output) to form the derivative.
      info.activation_bytes = width * kBytesPerValue;
      break;
  }
  return info;
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

  std::vector<LayerInfo> infos;
  infos.reserve(model.layers.size());
  int64_t width = input_features(model);
  int64_t parameters = 0;
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const LayerSpec& spec = model.layers[i];
    const int index = static_cast<int>(i);
    LayerInfo info;
    if (spec.type == LayerType::Linear) {
      if (spec.out < 1)
        throw std::invalid_argument(layer_label(index) + ": linear needs out >= 1, got " +
                                    std::to_string(spec.out));
      if (spec.out > kMaxWidth)
        throw std::invalid_argument(layer_label(index) + ": linear out = " + std::to_string(spec.out) +
                                    " is more than the " + std::to_string(kMaxWidth) +
                                    " values per sample PipeLab handles; use a smaller out");
      info = describe_linear(spec, width);
    } else {
      if (spec.type == LayerType::Dropout && !(spec.p >= 0.0 && spec.p < 1.0))
        throw std::invalid_argument(layer_label(index) + ": dropout needs p in [0, 1), got " +
                                    std::to_string(spec.p));
      info = describe_elementwise(spec, width);
    }
    info.index = index;
    info.type = spec.type;
    info.output_bytes = info.out_features * kBytesPerValue;
    width = info.out_features;
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

int64_t output_features(const ModelSpec& model) {
  int64_t width = input_features(model);
  for (const LayerSpec& layer : model.layers)
    if (layer.type == LayerType::Linear) width = layer.out;
  return width;
}

int count_linear_layers(const ModelSpec& model) {
  int count = 0;
  for (const LayerSpec& layer : model.layers)
    if (layer.type == LayerType::Linear) ++count;
  return count;
}

}  // namespace pipelab
