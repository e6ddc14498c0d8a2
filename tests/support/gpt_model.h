// The GPT-shaped ModelSpec the tests build again and again: an embedding,
// `blocks` Transformer blocks, a final layernorm and a linear back to the
// vocabulary (the output layer). Header-only, so every suite can use it.
#pragma once

#include <cstdint>

#include "core/model/model_spec.h"

namespace pipelab::testing {

struct GptShape {
  int64_t seq = 8;  // model.input: tokens per sample
  int64_t vocab = 16;
  int64_t dim = 16;
  int64_t heads = 2;
  int blocks = 2;
  double dropout = 0.0;  // inside each block
};

inline ModelSpec gpt_model(const GptShape& shape) {
  ModelSpec model;
  model.input = {shape.seq};
  LayerSpec embedding;
  embedding.type = LayerType::Embedding;
  embedding.vocab = shape.vocab;
  embedding.dim = shape.dim;
  LayerSpec block;
  block.type = LayerType::TransformerBlock;
  block.heads = shape.heads;
  block.dropout = shape.dropout;
  LayerSpec norm;
  norm.type = LayerType::LayerNorm;
  LayerSpec head;
  head.type = LayerType::Linear;
  head.out = shape.vocab;
  model.layers = {embedding};
  for (int i = 0; i < shape.blocks; ++i) model.layers.push_back(block);
  model.layers.push_back(norm);
  model.layers.push_back(head);
  return model;
}

}  // namespace pipelab::testing
