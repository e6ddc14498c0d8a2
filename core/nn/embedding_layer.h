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
// asks: an embedding is always the model's first layer). Under rotary position
// embeddings (learned_positions false) there is no position table: the
// blocks turn q and k instead (rotary.h).
//
// Sequence parallelism (`sequence_shards` > 1): the shards' lookups are
// reduce-scattered instead, each keeping its slice of the sequence
// (sequence_split.h) and adding its positions' rows, so the output is
// [batch, seq / tp * dim]; backward gathers the whole gradient back first.
//
// Context parallelism (`context_positions` given): the layer reads the
// rank's ids only, [batch, seq / cp], and adds the position rows of their
// global positions (context_split.h); sequence parallelism then splits those.
// The position table stays whole, its gradient the rank's positions' share.
#pragma once

#include <cstdint>
#include <vector>

#include "core/nn/embedding.h"
#include "core/nn/layer.h"
#include "core/nn/sequence_split.h"

namespace pipelab {

class EmbeddingLayer : public Layer {
 public:
  // Zero tables; call init. `range` is the token rows this shard holds (the
  // whole vocabulary without tensor parallelism).
  EmbeddingLayer(int index, const VocabRange& range, int64_t dim, int64_t seq,
                 DeviceAllocator* allocator, int sequence_shards = 1, int sequence_shard = 0,
                 bool learned_positions = true, std::vector<int64_t> context_positions = {});
  void init(uint64_t seed);

  // Throws std::invalid_argument naming the id when a token is outside [0, vocab).
  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
  void backward_weight(const Tensor& x, const Tensor& dy) override;
  std::vector<Tensor*> params() override {
    if (!learned_positions()) return {&token_table_};
    return {&token_table_, &position_table_};
  }
  std::vector<Tensor*> grads() override {
    if (!learned_positions()) return {&token_grad_};
    return {&token_grad_, &position_grad_};
  }
  void connect_all_reduce(InnerAllReduce all_reduce) override {
    all_reduce_ = std::move(all_reduce);
  }
  void connect_sequence_parallel(InnerSequenceCollectives collectives) override {
    sequence_ = std::move(collectives);
  }

  const VocabRange& range() const { return range_; }
  Tensor& token_table() { return token_table_; }
  Tensor& position_table() { return position_table_; }  // empty without learned positions
  bool learned_positions() const { return !position_table_.empty(); }

 private:
  // This shard's part of the sequence of a micro-batch of `batch` samples.
  SequenceSlice slice(int64_t batch) const;
  // The position table's rows for positions [first, first + count) of the
  // ids this layer reads: a view, or under context parallelism a copy.
  Tensor position_rows(int64_t first, int64_t count) const;

  const VocabRange range_;
  const int64_t dim_;
  const int64_t seq_;
  const std::vector<int64_t> context_positions_;  // empty without context parallelism
  const int64_t local_seq_;                       // the ids per sample: seq, or seq / cp
  const int sequence_shards_;  // 1 unless sequence parallel
  const int sequence_shard_;
  Tensor token_table_;     // [range.rows, dim], Weights
  Tensor position_table_;  // [seq, dim], Weights; empty under rotary embeddings
  Tensor token_grad_;      // Gradients
  Tensor position_grad_;
  InnerAllReduce all_reduce_;  // set when the vocabulary is split
  InnerSequenceCollectives sequence_;  // set when the sequence is split
};

}  // namespace pipelab
