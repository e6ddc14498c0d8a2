#include "core/nn/block_config.h"

namespace pipelab {

GptBlockConfig block_config(const LayerLayout& layer) {
  const LayerSpec& spec = layer.spec;
  GptBlockConfig config;
  config.dim = layer.token_in();
  config.heads = spec.heads;
  config.ffn_hidden = spec.ffn > 0 ? spec.ffn : 4 * config.dim;  // the model's default
  config.norm = spec.norm;
  config.activation = spec.activation;
  config.causal = spec.causal;
  config.bias = spec.bias;
  config.keep_attention_probabilities = !layer.selective_recompute;
  config.dropout = static_cast<float>(spec.dropout);
  config.dense_mlp = spec.experts == 0;  // else a mixture of experts is the MLP
  config.kv_heads = spec.kv_heads;
  config.rotary = layer.rotary;
  config.rotary_theta = layer.rotary_theta;
  return config;
}

}  // namespace pipelab
