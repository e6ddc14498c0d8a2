// ModelSpec: the layer stack a user describes, and what follows from it
// (shapes, parameter counts, FLOPs and activation sizes per layer).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/image_shape.h"
#include "core/model/mixture_of_experts.h"
#include "core/model/transformer_block.h"

namespace pipelab {

// Embedding and TransformerBlock make a sequence model (a GPT): its first
// layer is an embedding, its input is model.input = [sequence_length] token
// ids, and every later layer works on each of the sequence's positions (a
// linear or a layernorm is applied per token).
//
// Conv2d, the pools, BatchNorm and ResidualBlock work on images: model.input =
// [channels, height, width] (image_shape.h); Flatten, GlobalAvgPool or a
// Linear turn the image into a flat vector.
enum class LayerType {
  Linear, Relu, Gelu, Tanh, Sigmoid, LayerNorm, Dropout, Embedding, TransformerBlock,
  Conv2d, MaxPool, AvgPool, GlobalAvgPool, Flatten, BatchNorm, ResidualBlock,
  Moe  // Mixture-of-Experts (mixture_of_experts.h): per token, or per sample after a linear
};
enum class LossType { CrossEntropy, Mse };
// How a sequence model knows positions: a learned table in the embedding
// (GPT), or rotary embeddings applied to Q and K in every block (rope: LLaMA).
enum class PositionEncoding { Learned, Rope };
inline constexpr double kDefaultRopeTheta = 10000.0;

// One entry of the layer stack, as written in an experiment file.
struct LayerSpec {
  LayerType type = LayerType::Linear;
  int64_t out = 0;     // linear: output width; conv2d, residual_block: output channels
  bool bias = true;    // linear, transformer_block: add bias vectors
  double p = 0.0;      // dropout: drop probability in [0, 1)
  // embedding: token ids in [0, vocab), each mapped to `dim` values, plus a
  // learned position embedding of the same width (position learned), or
  // none, the blocks rotating Q and K instead (rope).
  int64_t vocab = 0;
  int64_t dim = 0;
  PositionEncoding position = PositionEncoding::Learned;
  // rope: the rotation's base theta (pair c of a head turns by position x
  // theta^(-2c / head_dim)); 10000 as RoFormer and LLaMA 2, LLaMA 3 500000
  // (Megatron-LM's --rotary-base, Hugging Face's rope_theta).
  double rope_theta = kDefaultRopeTheta;
  // transformer_block (its width is the incoming per-token width).
  int64_t heads = 0;
  int64_t kv_heads = 0;     // key/value heads (grouped-query attention; divides heads); 0 = heads
  int64_t ffn = 0;          // MLP hidden width (moe: each expert's); 0 = 4 x the width
  bool causal = true;       // each position attends to itself and earlier ones only
  NormType norm = NormType::LayerNorm;
  BlockActivation activation = BlockActivation::Gelu;
  double dropout = 0.0;     // after the attention scores, Proj and FFN2; in [0, 1)
  // conv2d, maxpool, avgpool: the window (residual_block: stride only; its
  // convolutions are 3 x 3 with padding 1). The reader fills a pool's
  // defaults (kernel 2, stride = kernel).
  int64_t kernel = 3;
  int64_t stride = 1;
  int64_t padding = 0;
  // batchnorm: statistics over the batch (and every pixel of a channel);
  // `sync` sums them over the data-parallel replicas (residual_block: its
  // batch norms'). running = (1 - momentum)
  // running + momentum batch, as PyTorch.
  bool sync = false;
  double momentum = 0.1;
  double eps = 1e-5;
  // moe (and transformer_block with experts > 0, whose MLP it then is):
  // `experts` MLPs of hidden width `ffn`, each token routed to its top_k
  // by a learned gate; an expert takes at most ceil(capacity_factor x tokens x
  // top_k / experts) of a micro-batch's tokens, and the load-balancing loss
  // aux_loss_weight x E x sum_e f_e P_e is added to the training loss.
  int64_t experts = 0;
  int64_t top_k = 1;
  double capacity_factor = 1.25;
  double aux_loss_weight = 0.01;

  bool operator==(const LayerSpec&) const = default;
};

struct ModelSpec {
  std::vector<int64_t> input;  // input shape per sample, e.g. {784} or {1, 28, 28}
  std::vector<LayerSpec> layers;
  LossType loss = LossType::CrossEntropy;
};

// What a layer costs, per sample, derived from the spec. FLOPs count a
// multiply-add as two operations. In a sequence model a sample is a sequence
// of `tokens` positions, and the widths count every position's values.
struct LayerInfo {
  int index = 0;
  LayerType type = LayerType::Linear;
  int64_t tokens = 1;          // positions per sample (1 unless a sequence model)
  int64_t in_features = 0;     // values per sample in (an embedding: the token ids)
  int64_t out_features = 0;    // values per sample out
  TransformerBlockShape block;  // transformer_block only
  MoeShape moe;                 // moe, and a transformer_block's experts (has_experts)
  // The image entering and leaving the layer; invalid (all 0) where the
  // values are a flat vector (image_shape.h).
  ImageShape image_in;
  ImageShape image_out;
  int64_t params = 0;                  // trainable scalars
  double forward_flops = 0;            // per sample
  double backward_input_flops = 0;     // per sample: gradient w.r.t. the input
  double backward_weight_flops = 0;    // per sample: gradient w.r.t. the weights
  int64_t activation_bytes = 0;        // per sample, kept from forward for backward
  int64_t output_bytes = 0;            // per sample: the output tensor (sent between stages)

  // A moe layer, or a transformer_block whose MLP is a mixture of experts.
  bool has_experts() const {
    return type == LayerType::Moe || (type == LayerType::TransformerBlock && block.has_experts());
  }
  int64_t token_in() const { return in_features / tokens; }    // per position
  int64_t token_out() const { return out_features / tokens; }  // per position
};

const char* layer_type_name(LayerType type);
std::optional<LayerType> parse_layer_type(const std::string& name);
std::vector<std::string> layer_type_names();  // every valid name, in order
const char* norm_type_name(NormType type);
std::optional<NormType> parse_norm_type(const std::string& name);
std::vector<std::string> norm_type_names();
const char* block_activation_name(BlockActivation activation);
std::optional<BlockActivation> parse_block_activation(const std::string& name);
std::vector<std::string> block_activation_names();
const char* position_encoding_name(PositionEncoding position);  // "learned", "rope"
std::optional<PositionEncoding> parse_position_encoding(const std::string& name);
std::vector<std::string> position_encoding_names();
const char* loss_type_name(LossType type);
std::optional<LossType> parse_loss_type(const std::string& name);
std::vector<std::string> loss_type_names();

// True for the layer types that need an image (conv2d, pools, residual_block,
// global_avgpool); batchnorm and flatten take either an image or a vector.
bool needs_image(LayerType type);
// needs_image, or batchnorm or flatten: the layers image_layers.h describes.
bool is_image_layer(LayerType type);
// The window a conv2d or pool applies (residual_block: its first 3 x 3 convolution's).
Window layer_window(const LayerSpec& spec);
// The image model.input describes: [channels, height, width]; invalid otherwise.
ImageShape input_image(const ModelSpec& model);

// A moe layer's shape from its spec, the per-token width reaching it and the
// positions per sample; throws std::invalid_argument naming `label` and the
// fix when a field is out of range (experts < 1, top_k outside [1, experts],
// capacity_factor <= 0, aux_loss_weight < 0).
MoeShape moe_shape(const LayerSpec& spec, int64_t dim, int64_t tokens, const std::string& label);

// A moe layer, or a transformer_block with experts > 0: the layers that
// route tokens to experts (expert parallelism, expert load).
bool has_experts(const LayerSpec& spec);
// Whether any of the model's layers has experts.
bool model_has_experts(const ModelSpec& model);

// Flattened input width (product of the input shape).
int64_t input_features(const ModelSpec& model);

// Derives every layer's shapes and costs. Throws std::invalid_argument with a
// message naming the layer when the spec is inconsistent (e.g. a linear with
// out <= 0, an empty input shape).
std::vector<LayerInfo> describe_layers(const ModelSpec& model);

// Width of the model's output per sample (the last linear's out, times the
// sequence length in a sequence model; or the input width).
int64_t output_features(const ModelSpec& model);

// True when the first layer is an embedding: the model reads token ids.
bool is_sequence_model(const ModelSpec& model);
// Positions per sample: model.input[0] for a sequence model, else 1.
int64_t sequence_length(const ModelSpec& model);

// Number of linear layers (tensor parallelism shards these).
int count_linear_layers(const ModelSpec& model);

}  // namespace pipelab
