// ModelSpec: the layer stack a user describes, and what follows from it
// (shapes, parameter counts, FLOPs and activation sizes per layer).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipelab {

enum class LayerType { Linear, Relu, Gelu, Tanh, Sigmoid, LayerNorm, Dropout };
enum class LossType { CrossEntropy, Mse };

// One entry of the layer stack, as written in an experiment file.
struct LayerSpec {
  LayerType type = LayerType::Linear;
  int64_t out = 0;     // linear: output width
  bool bias = true;    // linear: add a bias vector
  double p = 0.0;      // dropout: drop probability in [0, 1)
};

struct ModelSpec {
  std::vector<int64_t> input;  // input shape per sample, e.g. {784} or {1, 28, 28}
  std::vector<LayerSpec> layers;
  LossType loss = LossType::CrossEntropy;
};

// What a layer costs, per sample, derived from the spec. FLOPs count a
// multiply-add as two operations.
struct LayerInfo {
  int index = 0;
  LayerType type = LayerType::Linear;
  int64_t in_features = 0;
  int64_t out_features = 0;
  int64_t params = 0;                  // trainable scalars
  double forward_flops = 0;            // per sample
  double backward_input_flops = 0;     // per sample: gradient w.r.t. the input
  double backward_weight_flops = 0;    // per sample: gradient w.r.t. the weights
  int64_t activation_bytes = 0;        // per sample, kept from forward for backward
  int64_t output_bytes = 0;            // per sample: the output tensor (sent between stages)
};

const char* layer_type_name(LayerType type);
std::optional<LayerType> parse_layer_type(const std::string& name);
std::vector<std::string> layer_type_names();  // every valid name, in order
const char* loss_type_name(LossType type);
std::optional<LossType> parse_loss_type(const std::string& name);
std::vector<std::string> loss_type_names();

// Flattened input width (product of the input shape).
int64_t input_features(const ModelSpec& model);

// Derives every layer's shapes and costs. Throws std::invalid_argument with a
// message naming the layer when the spec is inconsistent (e.g. a linear with
// out <= 0, an empty input shape).
std::vector<LayerInfo> describe_layers(const ModelSpec& model);

// Width of the model's output (the last linear's out, or the input width).
int64_t output_features(const ModelSpec& model);

// Number of linear layers (tensor parallelism shards these).
int count_linear_layers(const ModelSpec& model);

}  // namespace pipelab
