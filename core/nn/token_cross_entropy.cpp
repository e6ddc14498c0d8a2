#include "core/nn/token_cross_entropy.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipelab {
namespace {

bool kept(std::span<const uint8_t> mask, int64_t row) { return mask.empty() || mask[row] != 0; }

void check_inputs(int64_t rows, std::span<const int32_t> labels, std::span<const uint8_t> mask) {
  if (static_cast<int64_t>(labels.size()) != rows)
    throw std::invalid_argument("cross-entropy got " + std::to_string(labels.size()) +
                                " labels for " + std::to_string(rows) +
                                " tokens; give one label per token");
  if (!mask.empty() && static_cast<int64_t>(mask.size()) != rows)
    throw std::invalid_argument("cross-entropy got a loss mask of " + std::to_string(mask.size()) +
                                " entries for " + std::to_string(rows) +
                                " tokens; give one per token, or none to count every token");
}

}  // namespace

void vocab_parallel_local_max(const Tensor& logits, std::span<float> row_max) {
  assert(static_cast<int64_t>(row_max.size()) == logits.rows());
  for (int64_t r = 0; r < logits.rows(); ++r) {
    const float* z = logits.row(r);
    float best = -INFINITY;
    for (int64_t c = 0; c < logits.cols(); ++c) best = std::max(best, z[c]);
    row_max[r] = best;
  }
}

void vocab_parallel_local_sums(const Tensor& logits, std::span<const float> row_max,
                               std::span<const int32_t> labels, std::span<const uint8_t> mask,
                               const VocabRange& range, std::span<float> sums) {
  const int64_t rows = logits.rows();
  check_inputs(rows, labels, mask);
  assert(logits.cols() == range.rows);
  assert(static_cast<int64_t>(row_max.size()) == rows &&
         static_cast<int64_t>(sums.size()) == 2 * rows);
  for (int64_t r = 0; r < rows; ++r) {
    sums[r] = 0.0f;
    sums[rows + r] = 0.0f;
    if (!kept(mask, r)) continue;
    const int32_t label = labels[r];
    if (label < 0 || label >= range.vocab)
      throw std::invalid_argument("cross-entropy label " + std::to_string(label) + " of token " +
                                  std::to_string(r) + " is outside the vocabulary [0, " +
                                  std::to_string(range.vocab) +
                                  "); mask the token out or fix the data's vocabulary");
    const float* z = logits.row(r);
    const float max_logit = row_max[r];
    double sum_exp = 0;
    for (int64_t c = 0; c < logits.cols(); ++c) sum_exp += std::exp(z[c] - max_logit);
    sums[r] = static_cast<float>(sum_exp);
    if (range.holds(label)) sums[rows + r] = z[label - range.begin];
  }
}

TokenLoss vocab_parallel_finish(const Tensor& logits, std::span<const float> row_max,
                                std::span<const float> sums, std::span<const int32_t> labels,
                                std::span<const uint8_t> mask, const VocabRange& range,
                                Tensor* grad) {
  const int64_t rows = logits.rows();
  check_inputs(rows, labels, mask);
  assert(static_cast<int64_t>(sums.size()) == 2 * rows);
  assert(!grad || grad->same_shape(logits));
  TokenLoss result;
  for (int64_t r = 0; r < rows; ++r) {
    if (!kept(mask, r)) continue;
    ++result.tokens;
    result.loss_sum += std::log(static_cast<double>(sums[r])) + row_max[r] - sums[rows + r];
  }
  if (result.tokens > 0) result.loss = result.loss_sum / static_cast<double>(result.tokens);
  if (!grad) return result;
  const float inverse_tokens = result.tokens ? 1.0f / static_cast<float>(result.tokens) : 0.0f;
  for (int64_t r = 0; r < rows; ++r) {
    float* __restrict__ g = grad->row(r);
    const int64_t width = logits.cols();
    if (!kept(mask, r)) {
      std::fill(g, g + width, 0.0f);
      continue;
    }
    const float* __restrict__ z = logits.row(r);
    const float max_logit = row_max[r];
    const float factor = inverse_tokens / sums[r];  // softmax / kept = exp(z - max) * factor
    for (int64_t c = 0; c < width; ++c) g[c] = std::exp(z[c] - max_logit) * factor;
    if (range.holds(labels[r])) g[labels[r] - range.begin] -= inverse_tokens;
  }
  return result;
}

TokenLoss vocab_parallel_cross_entropy(const Tensor& logits, std::span<const int32_t> labels,
                                       std::span<const uint8_t> mask, const VocabRange& range,
                                       const AllReduceFunction& all_reduce_max,
                                       const AllReduceFunction& all_reduce_sum, Tensor* grad) {
  const int64_t rows = logits.rows();
  check_inputs(rows, labels, mask);
  if (logits.cols() != range.rows)
    throw std::invalid_argument("the logits have " + std::to_string(logits.cols()) +
                                " columns but the vocabulary shard holds " +
                                std::to_string(range.rows) +
                                "; the output layer's width must be vocab / tp");
  std::vector<float> row_max(rows);
  std::vector<float> sums(2 * rows);
  vocab_parallel_local_max(logits, row_max);
  all_reduce_max(row_max.data(), rows);
  vocab_parallel_local_sums(logits, row_max, labels, mask, range, sums);
  all_reduce_sum(sums.data(), 2 * rows);
  return vocab_parallel_finish(logits, row_max, sums, labels, mask, range, grad);
}

TokenLoss token_cross_entropy(const Tensor& logits, std::span<const int32_t> labels,
                              std::span<const uint8_t> mask, Tensor* grad) {
  return vocab_parallel_cross_entropy(logits, labels, mask, whole_vocab(logits.cols()),
                                      all_reduce_nothing, all_reduce_nothing, grad);
}

}  // namespace pipelab
