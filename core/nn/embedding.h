// GPT's input: a learned token embedding plus a learned position embedding.
// Tokens are a micro-batch of [batch, seq] int32 ids, flattened row-major, so
// output row i = b * seq + t is token (b, t) and uses position t:
//   y[i] = token_table[tokens[i]] + position_table[i % seq]     y is [batch * seq, dim]
// Backward scatter-adds dy's rows into both tables' gradients (a token that
// appears twice gets both rows' gradients).
//
// Vocabulary parallelism (Megatron's VocabParallelEmbedding): shard k of tp
// holds token rows [k V / tp, (k + 1) V / tp). A shard writes zero rows for ids
// it does not hold, so the all-reduce (sum) of the shards' outputs is the full
// lookup; the position embedding is replicated and added once, after that
// all-reduce. Each shard's backward adds only its own rows' gradients, from
// the full (replicated) dy.
#pragma once

#include <cstdint>
#include <span>

#include "core/nn/tensor.h"

namespace pipelab {

// Token rows [begin, begin + rows) of a vocabulary of `vocab` ids.
struct VocabRange {
  int64_t begin = 0;
  int64_t rows = 0;
  int64_t vocab = 0;
  bool holds(int64_t id) const { return id >= begin && id < begin + rows; }
};

// The whole vocabulary: what a single device (tp = 1) holds.
inline VocabRange whole_vocab(int64_t vocab) { return {0, vocab, vocab}; }
// Shard `shard` of `tp`. Throws std::invalid_argument unless 0 <= shard < tp
// and tp divides vocab (pad the vocabulary to a multiple of tp, as Megatron does).
VocabRange vocab_shard(int64_t vocab, int tp, int shard);

// y [tokens.size(), dim] = the table's row for each id held by `range`, zero
// for the others. table is [range.rows, dim]. Throws std::invalid_argument for
// an id outside [0, range.vocab).
void token_embedding_forward(std::span<const int32_t> tokens, const Tensor& table,
                             const VocabRange& range, Tensor& y);
// table_grad [range.rows, dim] += dy's rows at the ids `range` holds.
void token_embedding_backward(std::span<const int32_t> tokens, const Tensor& dy,
                              const VocabRange& range, Tensor& table_grad);

// y row i += position_table row (i % seq); y's rows are a whole number of
// sequences. Throws std::invalid_argument when seq exceeds the table's rows
// (the model's maximum sequence length).
void add_position_embedding(const Tensor& position_table, int64_t seq, Tensor& y);
// position_grad row (i % seq) += dy row i.
void position_embedding_backward(const Tensor& dy, int64_t seq, Tensor& position_grad);

// The unsharded embedding: token lookup then positions, for `seq` tokens per sequence.
void embedding_forward(std::span<const int32_t> tokens, int64_t seq, const Tensor& token_table,
                       const Tensor& position_table, Tensor& y);
void embedding_backward(std::span<const int32_t> tokens, int64_t seq, const Tensor& dy,
                        Tensor& token_grad, Tensor& position_grad);

}  // namespace pipelab
