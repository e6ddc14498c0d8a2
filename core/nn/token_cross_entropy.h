// The language-model loss: softmax cross-entropy of each row (token) of
// logits [rows, vocab] against its int32 label, averaged over the rows the
// mask keeps:
//   loss = sum over kept rows of (logsumexp(z) - z[label]) / kept
//   grad = (softmax(z) - onehot(label)) / kept on kept rows, 0 on the others
// The mask is empty (every row counts) or one byte per row (nonzero keeps
// it, like Megatron's loss_mask); a dropped row's label is never read, so it
// may hold a padding id such as -100. With no kept rows the loss is 0 and the
// gradient all zero (nothing to learn from, rather than 0 / 0).
//
// Vocabulary parallelism, as Megatron's vocab-parallel cross-entropy: shard k
// holds logits columns range = vocab_shard(vocab, tp, k) (embedding.h), and
// the full softmax needs two all-reduces between three local steps:
//   1. vocab_parallel_local_max     row maxima of the shard's logits
//        -> all-reduce MAX over the shards (rows floats)
//   2. vocab_parallel_local_sums    per row sum(exp(z - max)) and the label's
//        logit (0 when another shard holds the label)
//        -> all-reduce SUM over the shards (2 * rows floats, one buffer)
//   3. vocab_parallel_finish        the loss (the same on every shard) and the
//        shard's columns of the gradient
// An executor runs the steps and inserts its collectives between them, or
// calls vocab_parallel_cross_entropy with the two collectives as functions.
// With tp = 1 the collectives are the identity, and token_cross_entropy is
// exactly that, so every tp computes the same numbers up to the order of the
// exchanged sums.
#pragma once

#include <cstdint>
#include <span>

#include "core/nn/all_reduce.h"
#include "core/nn/embedding.h"
#include "core/nn/tensor.h"

namespace pipelab {

struct TokenLoss {
  double loss = 0;      // mean over the kept rows; 0 when none is kept
  double loss_sum = 0;  // sum over the kept rows (for means across micro-batches)
  int64_t tokens = 0;   // kept rows
};

// grad, when not null, is [rows, vocab] and overwritten. Throws
// std::invalid_argument when labels (or a non-empty mask) do not have one
// entry per row, or a kept row's label is outside [0, vocab).
TokenLoss token_cross_entropy(const Tensor& logits, std::span<const int32_t> labels,
                              std::span<const uint8_t> mask, Tensor* grad);

// Step 1: row_max[r] = max of the shard's logits row r (rows entries).
void vocab_parallel_local_max(const Tensor& logits, std::span<float> row_max);

// Step 2, with the all-reduced maxima: sums[r] = sum over the shard's columns
// of exp(z - row_max[r]); sums[rows + r] = the label's logit if this shard
// holds it, else 0. Dropped rows get zeros. Throws like token_cross_entropy.
void vocab_parallel_local_sums(const Tensor& logits, std::span<const float> row_max,
                               std::span<const int32_t> labels, std::span<const uint8_t> mask,
                               const VocabRange& range, std::span<float> sums);

// Step 3, with the all-reduced sums: the loss, and into grad (when not null;
// [rows, range.rows], overwritten) this shard's columns of the gradient.
TokenLoss vocab_parallel_finish(const Tensor& logits, std::span<const float> row_max,
                                std::span<const float> sums, std::span<const int32_t> labels,
                                std::span<const uint8_t> mask, const VocabRange& range,
                                Tensor* grad);

// The three steps with the collectives in between: all_reduce_max must leave
// the element-wise maximum over the shards, all_reduce_sum the sum.
TokenLoss vocab_parallel_cross_entropy(const Tensor& logits, std::span<const int32_t> labels,
                                       std::span<const uint8_t> mask, const VocabRange& range,
                                       const AllReduceFunction& all_reduce_max,
                                       const AllReduceFunction& all_reduce_sum, Tensor* grad);

}  // namespace pipelab
