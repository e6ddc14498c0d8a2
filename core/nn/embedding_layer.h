// EmbeddingLayer: a GPT's first layer (embedding.h's math as a stage layer).
// Its input is a micro-batch of token ids stored as floats, [batch, seq] (the
// data sets keep ids in x, exactly: see Dataset); its output is each
// position's token row plus its position row, [batch, seq * dim], sample-major
// like every activation of a sequence model (per_token_layer.h).
//
// Weights: the token table [vocab, dim] (a vocabulary shard's rows under
// tensor parallelism) and the position table [seq, dim], initialised by
// init_embedding_table from (seed, layer) only, so a shard holds exactly its
// rows of the tp = 1 table. A shard's lookup is zero for ids it does not hold:
// the stage's all-reduce (connect_all_reduce) sums the shards' lookups into
// the full one, and the replicated position rows are added once, after it.
// The ids need no gradient, so backward_input returns zeros (the stage never
// asks: an embedding is always the model's first layer).
#pragma once

#include <cstdint>
#include <vector>

#include "core/nn/embedding.h"
#include "core/nn/layer.h"

namespace pipelab {

class EmbeddingLayer : public Layer {
 public:
  // Zero tables; call init. `range` is the token rows this shard holds (the
  // whole vocabulary without tensor parallelism).
  EmbeddingLayer(int index, const VocabRange& range, int64_t dim, int64_t seq,
                 DeviceAllocator* allocator);
  void init(uint64_t seed);

  // Throws std::invalid_argument naming the id when a token is outside [0, vocab).
  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
  void backward_weight(const Tensor& x, const Tensor& dy) override;
  std::vector<Tensor*> params() override { return {&token_table_, &position_table_}; }
  std::vector<Tensor*> grads() override { return {&token_grad_, &position_grad_}; }
  void connect_all_reduce(InnerAllReduce all_reduce) override {
    all_reduce_ = std::move(all_reduce);
  }

  const VocabRange& range() const { return range_; }
  Tensor& token_table() { return token_table_; }
  Tensor& position_table() { return position_table_; }

 private:
  const VocabRange range_;
  const int64_t dim_;
  const int64_t seq_;
  Tensor token_table_;     // [range.rows, dim], Weights
  Tensor position_table_;  // [seq, dim], Weights
  Tensor token_grad_;      // Gradients
  Tensor position_grad_;
  InnerAllReduce all_reduce_;  // set when the vocabulary is split
};

}  // namespace pipelab
