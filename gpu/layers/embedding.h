// GpuEmbedding: core/nn/embedding_layer.h on the CUDA backend: token ids
// [batch, seq] (floats, as the data sets keep them) to each position's token
// row plus its position row, [batch, seq * dim]. Same tables, same init
// (computed on the host by core/nn/init.h and copied up), same vocabulary
// parallelism: a shard looks up zeros for ids it does not hold, the stage's
// all-reduce (connect_all_reduce) sums the shards' lookups, and the replicated
// position rows are added once, after it. backward_input returns zeros (ids
// take no gradient); backward_weight scatter-adds dy in token order
// (kernels/embedding.h), deterministically.
//
// Under sequence parallelism (sequence_shards > 1, as the CPU layer): each
// shard looks up the whole sequence from its vocabulary rows, reduce-scatters
// the lookups onto its slice of the positions and adds those positions' rows;
// backward_weight gathers dy over the whole sequence first.
//
// Under context parallelism (`context_positions` given, as the CPU layer):
// the layer reads the ids of the rank's positions, [batch, seq / cp], and adds
// the position rows at their global positions (two runs of the table, one
// per chunk); their gradients go back to those rows. Sequence parallelism
// then splits the rank's positions.
//
// Unlike the CPU layer, which throws for an id outside the vocabulary, the
// kernel cannot report one without stalling the stream: such an id looks up
// a zero row (the data sets' vocabularies are checked when they load).
#pragma once

#include <cstdint>
#include <vector>

#include "core/nn/embedding.h"
#include "core/nn/sequence_split.h"
#include "gpu/layers/layer.h"

namespace pipelab::gpu {

class GpuEmbedding : public GpuLayer {
 public:
  // Tables initialised from (seed, index) for this shard's `range` of token
  // rows; the output is the shard's slice of the sequence when
  // sequence_shards > 1.
  // learned_positions false (rotary embeddings, core/nn/rotary.h): no position table.
  GpuEmbedding(int index, const VocabRange& range, int64_t dim, int64_t seq, uint64_t seed,
               DeviceContext& context, int sequence_shards = 1, int sequence_shard = 0,
               bool learned_positions = true, std::vector<int64_t> context_positions = {});

  DeviceTensor forward(const DeviceTensor& x, const ForwardInfo& info) override;
  DeviceTensor backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                              const ForwardInfo& info) override;
  void backward_weight(const DeviceTensor& x, const DeviceTensor& dy) override;
  std::vector<DeviceTensor*> params() override {
    if (!learned_positions()) return {&token_table_};
    return {&token_table_, &position_table_};
  }
  std::vector<DeviceTensor*> grads() override {
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
  bool learned_positions() const { return !position_table_.empty(); }

 private:
  SequenceSlice slice(int64_t batch) const;
  // The position table's rows of the rank's positions from `first` on (a view
  // of the table, or under context parallelism a Workspace copy in `copy`).
  const float* position_rows(int64_t first, DeviceTensor& copy) const;

  // A run of consecutive positions: local rows [local, local + count) are
  // table rows [global, global + count).
  struct PositionRun {
    int64_t local = 0, global = 0, count = 0;
  };

  const VocabRange range_;
  const int64_t dim_;
  const int64_t seq_;        // the whole sequence (the position table's rows)
  const int64_t local_seq_;  // the positions this rank holds: seq, or seq / cp
  const int sequence_shards_;
  const int sequence_shard_;
  DeviceTensor token_table_;     // [range.rows, dim], Weights
  DeviceTensor position_table_;  // [seq, dim], Weights; empty under rotary embeddings
  DeviceTensor token_grad_;      // Gradients
  DeviceTensor position_grad_;
  InnerAllReduce all_reduce_;  // set when the vocabulary is split
  InnerSequenceCollectives sequence_;  // set under sequence parallelism
  std::vector<PositionRun> context_runs_;  // empty without context parallelism
};

}  // namespace pipelab::gpu
