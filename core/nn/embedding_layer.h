// EmbeddingLayer: a GPT's first layer (embedding.h's math as a stage layer).
// Its input is a micro-batch of token ids stored as floats, [batch, seq] (the
// data sets keep ids in x, exactly: see Dataset); its output is each
// position's token row plus its position row, [batch, seq * dim], sample-major
// like every activation of a sequence model (per_token_layer.h).
//
// Weights: the token table [vocab, dim] and the position table [seq, dim],
// initialised by init_embedding_table from (seed, layer) only. The ids need
// no gradient, so backward_input returns zeros (the stage never asks: an
// embedding is always the model's first layer).
#pragma once

#include <cstdint>
#include <vector>

#include "core/nn/layer.h"

namespace pipelab {

class EmbeddingLayer : public Layer {
 public:
  // Zero tables; call init.
  EmbeddingLayer(int index, int64_t vocab, int64_t dim, int64_t seq, DeviceAllocator* allocator);
  void init(uint64_t seed);

  // Throws std::invalid_argument naming the id when a token is outside [0, vocab).
  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
  void backward_weight(const Tensor& x, const Tensor& dy) override;
  std::vector<Tensor*> params() override { return {&token_table_, &position_table_}; }
  std::vector<Tensor*> grads() override { return {&token_grad_, &position_grad_}; }

  Tensor& token_table() { return token_table_; }
  Tensor& position_table() { return position_table_; }

 private:
  const int64_t dim_;
  const int64_t seq_;
  Tensor token_table_;     // [vocab, dim], Weights
  Tensor position_table_;  // [seq, dim], Weights
  Tensor token_grad_;      // Gradients
  Tensor position_grad_;
};

}  // namespace pipelab
