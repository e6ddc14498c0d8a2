#include "core/runtime/microbatch_loss.h"

#include <cassert>
#include <cstring>

#include "core/nn/token_cross_entropy.h"

namespace pipelab {

namespace {

// Next-token cross-entropy over each position's logits: the [rows, tokens x
// vocab] outputs are [rows x tokens, vocab] row-major, one row per position.
LossResult token_loss(const Tensor& outputs, const MicrobatchTargets& targets, double scale,
                      bool with_grad) {
  const int64_t positions = outputs.rows() * targets.tokens;
  const Tensor logits = Tensor::view(outputs, positions, outputs.cols() / targets.tokens);
  LossResult result;
  if (with_grad)
    result.grad = Tensor(positions, logits.cols(), outputs.allocator(), MemoryCategory::Activations);
  const TokenLoss loss = token_cross_entropy(logits, targets.token_labels, targets.loss_mask,
                                             with_grad ? &result.grad : nullptr);
  result.loss_sum = loss.loss_sum;
  result.samples = loss.tokens;
  result.correct = count_correct(logits, targets.token_labels, targets.loss_mask);
  if (with_grad) {
    // token_cross_entropy averages over this micro-batch's counted positions;
    // the step averages over all of its own (scale = 1 / those).
    const float factor = static_cast<float>(static_cast<double>(loss.tokens) * scale);
    float* grad = result.grad.data();
    for (int64_t i = 0; i < result.grad.size(); ++i) grad[i] *= factor;
    result.grad.reshape(outputs.rows(), outputs.cols());
  }
  return result;
}

}  // namespace

int64_t count_correct(const Tensor& outputs, std::span<const int32_t> labels,
                      std::span<const uint8_t> mask) {
  assert(static_cast<int64_t>(labels.size()) == outputs.rows());
  assert(mask.empty() || mask.size() == labels.size());
  int64_t correct = 0;
  for (int64_t r = 0; r < outputs.rows(); ++r) {
    if (!mask.empty() && mask[static_cast<size_t>(r)] == 0) continue;
    const float* row = outputs.row(r);
    int64_t best = 0;
    for (int64_t c = 1; c < outputs.cols(); ++c)
      if (row[c] > row[best]) best = c;
    if (best == labels[static_cast<size_t>(r)]) ++correct;
  }
  return correct;
}

LossResult output_loss(LossType loss, const Tensor& outputs, const MicrobatchTargets& targets,
                       double scale, bool with_grad) {
  if (targets.tokens > 0) return token_loss(outputs, targets, scale, with_grad);
  if (loss == LossType::CrossEntropy)
    return softmax_cross_entropy(outputs, targets.labels, scale, with_grad);
  assert(targets.targets != nullptr && targets.rows == outputs.rows());
  Tensor expected(targets.rows, targets.width);  // data, not device memory: uncounted
  std::memcpy(expected.data(), targets.targets,
              static_cast<size_t>(expected.size()) * sizeof(float));
  LossResult result = mean_squared_error(outputs, expected, scale, with_grad);
  if (!targets.labels.empty()) result.correct = count_correct(outputs, targets.labels);
  return result;
}

}  // namespace pipelab
