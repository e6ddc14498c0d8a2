#include "core/nn/embedding.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

void check_id(int32_t id, size_t position, int64_t vocab) {
  if (id < 0 || id >= vocab)
    throw std::invalid_argument("token id " + std::to_string(id) + " at position " +
                                std::to_string(position) + " is outside the vocabulary [0, " +
                                std::to_string(vocab) +
                                "); the tokenizer's vocabulary must fit the embedding's");
}

void check_sequence(int64_t rows, int64_t seq, int64_t max_seq) {
  if (seq <= 0 || rows % seq != 0)
    throw std::invalid_argument("a micro-batch of " + std::to_string(rows) +
                                " tokens is not a whole number of sequences of " +
                                std::to_string(seq));
  if (seq > max_seq)
    throw std::invalid_argument("sequence length " + std::to_string(seq) +
                                " exceeds the position embedding's " + std::to_string(max_seq) +
                                " positions; raise the model's maximum sequence length");
}

}  // namespace

VocabRange vocab_shard(int64_t vocab, int tp, int shard) {
  if (tp < 1 || shard < 0 || shard >= tp)
    throw std::invalid_argument("vocabulary shard " + std::to_string(shard) + " of tp = " +
                                std::to_string(tp) + " does not exist; need 0 <= shard < tp");
  if (vocab % tp != 0)
    throw std::invalid_argument("tp = " + std::to_string(tp) +
                                " does not divide the vocabulary of " + std::to_string(vocab) +
                                "; pad the vocabulary to a multiple of tp");
  const int64_t rows = vocab / tp;
  return {rows * shard, rows, vocab};
}

void token_embedding_forward(std::span<const int32_t> tokens, const Tensor& table,
                             const VocabRange& range, Tensor& y) {
  assert(y.rows() == static_cast<int64_t>(tokens.size()) && y.cols() == table.cols());
  assert(table.rows() == range.rows);
  const int64_t dim = table.cols();
  for (size_t i = 0; i < tokens.size(); ++i) {
    const int32_t id = tokens[i];
    check_id(id, i, range.vocab);
    float* out = y.row(static_cast<int64_t>(i));
    if (range.holds(id)) {
      const float* source = table.row(id - range.begin);
      std::copy(source, source + dim, out);
    } else {
      std::fill(out, out + dim, 0.0f);
    }
  }
}

void token_embedding_backward(std::span<const int32_t> tokens, const Tensor& dy,
                              const VocabRange& range, Tensor& table_grad) {
  assert(dy.rows() == static_cast<int64_t>(tokens.size()) && dy.cols() == table_grad.cols());
  assert(table_grad.rows() == range.rows);
  const int64_t dim = dy.cols();
  for (size_t i = 0; i < tokens.size(); ++i) {
    const int32_t id = tokens[i];
    check_id(id, i, range.vocab);
    if (!range.holds(id)) continue;
    const float* __restrict__ grad = dy.row(static_cast<int64_t>(i));
    float* __restrict__ target = table_grad.row(id - range.begin);
    for (int64_t c = 0; c < dim; ++c) target[c] += grad[c];
  }
}

void add_position_embedding(const Tensor& position_table, int64_t seq, Tensor& y) {
  assert(y.cols() == position_table.cols());
  check_sequence(y.rows(), seq, position_table.rows());
  const int64_t dim = y.cols();
  for (int64_t i = 0; i < y.rows(); ++i) {
    const float* __restrict__ position = position_table.row(i % seq);
    float* __restrict__ out = y.row(i);
    for (int64_t c = 0; c < dim; ++c) out[c] += position[c];
  }
}

void position_embedding_backward(const Tensor& dy, int64_t seq, Tensor& position_grad) {
  assert(dy.cols() == position_grad.cols());
  check_sequence(dy.rows(), seq, position_grad.rows());
  const int64_t dim = dy.cols();
  for (int64_t i = 0; i < dy.rows(); ++i) {
    const float* __restrict__ grad = dy.row(i);
    float* __restrict__ target = position_grad.row(i % seq);
    for (int64_t c = 0; c < dim; ++c) target[c] += grad[c];
  }
}

void embedding_forward(std::span<const int32_t> tokens, int64_t seq, const Tensor& token_table,
                       const Tensor& position_table, Tensor& y) {
  token_embedding_forward(tokens, token_table, whole_vocab(token_table.rows()), y);
  add_position_embedding(position_table, seq, y);
}

void embedding_backward(std::span<const int32_t> tokens, int64_t seq, const Tensor& dy,
                        Tensor& token_grad, Tensor& position_grad) {
  token_embedding_backward(tokens, dy, whole_vocab(token_grad.rows()), token_grad);
  position_embedding_backward(dy, seq, position_grad);
}

}  // namespace pipelab
