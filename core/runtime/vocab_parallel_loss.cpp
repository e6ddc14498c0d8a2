#include "core/runtime/vocab_parallel_loss.h"

#include <algorithm>
#include <cassert>
#include <span>
#include <vector>

#include "core/nn/token_cross_entropy.h"

namespace pipelab {

std::optional<VocabRange> logits_shard(const Experiment& experiment,
                                       const std::vector<TensorParallelRole>& roles, int shard) {
  const int tp = experiment.parallel.tp;
  if (tp == 1 || roles.empty() || roles.back() != TensorParallelRole::ColumnParallel ||
      !is_sequence_model(experiment.model))
    return std::nullopt;
  return vocab_shard(experiment.model.layers.back().out, tp, shard);
}

namespace {

// Step 1: every shard's row maxima through one sum, then the maximum of them.
std::vector<float> global_row_max(const Tensor& logits, int tp, int shard,
                                  const AllReduceFunction& all_reduce_sum) {
  const int64_t rows = logits.rows();
  std::vector<float> slots(static_cast<size_t>(tp * rows), 0.0f);
  vocab_parallel_local_max(logits, std::span<float>(slots).subspan(shard * rows, rows));
  all_reduce_sum(slots.data(), static_cast<int64_t>(slots.size()));
  std::vector<float> row_max(slots.begin(), slots.begin() + rows);
  for (int k = 1; k < tp; ++k)
    for (int64_t r = 0; r < rows; ++r) row_max[r] = std::max(row_max[r], slots[k * rows + r]);
  return row_max;
}

// For the accuracy: per kept row, this shard's logits equal to the row's
// maximum at a column left of the label.
void local_ties_before_label(const Tensor& logits, std::span<const float> row_max,
                             std::span<const int32_t> labels, std::span<const uint8_t> mask,
                             const VocabRange& range, std::span<float> ties) {
  for (int64_t r = 0; r < logits.rows(); ++r) {
    ties[r] = 0.0f;
    if (!mask.empty() && mask[r] == 0) continue;
    const int64_t end = std::clamp<int64_t>(labels[r] - range.begin, 0, range.rows);
    const float* z = logits.row(r);
    for (int64_t c = 0; c < end; ++c)
      if (z[c] == row_max[r]) ties[r] += 1.0f;
  }
}

}  // namespace

LossResult vocab_parallel_token_loss(const Tensor& outputs, const MicrobatchTargets& targets,
                                     double scale, bool with_grad, const VocabRange& range,
                                     int tp, int shard, const AllReduceFunction& all_reduce_sum) {
  assert(targets.tokens > 0 && outputs.cols() == targets.tokens * range.rows);
  const int64_t rows = outputs.rows() * targets.tokens;
  const Tensor logits = Tensor::view(outputs, rows, range.rows);
  const std::span<const int32_t> labels = targets.token_labels;
  const std::span<const uint8_t> mask = targets.loss_mask;

  const std::vector<float> row_max = global_row_max(logits, tp, shard, all_reduce_sum);
  // Step 2: [sum of exp | label's logit | ties left of the label], one collective.
  std::vector<float> sums(static_cast<size_t>(3 * rows));
  const std::span<float> all(sums);
  vocab_parallel_local_sums(logits, row_max, labels, mask, range, all.first(2 * rows));
  local_ties_before_label(logits, row_max, labels, mask, range, all.subspan(2 * rows));
  all_reduce_sum(sums.data(), 3 * rows);

  LossResult result;
  if (with_grad)
    result.grad = Tensor(rows, range.rows, outputs.allocator(), MemoryCategory::Activations);
  const TokenLoss loss = vocab_parallel_finish(logits, row_max, all.first(2 * rows), labels, mask,
                                               range, with_grad ? &result.grad : nullptr);
  result.loss_sum = loss.loss_sum;
  result.samples = loss.tokens;
  for (int64_t r = 0; r < rows; ++r) {
    if (!mask.empty() && mask[r] == 0) continue;
    if (sums[rows + r] == row_max[r] && sums[2 * rows + r] == 0.0f) ++result.correct;
  }
  if (with_grad) {
    // As output_loss: the step averages over all of its counted positions.
    const float factor = static_cast<float>(static_cast<double>(loss.tokens) * scale);
    float* grad = result.grad.data();
    for (int64_t i = 0; i < result.grad.size(); ++i) grad[i] *= factor;
    result.grad.reshape(outputs.rows(), outputs.cols());
  }
  return result;
}

}  // namespace pipelab
