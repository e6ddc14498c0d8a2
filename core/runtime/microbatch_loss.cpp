#include "core/runtime/microbatch_loss.h"

#include <cassert>
#include <cstring>

namespace pipelab {

int64_t count_correct(const Tensor& outputs, std::span<const int32_t> labels) {
  assert(static_cast<int64_t>(labels.size()) == outputs.rows());
  int64_t correct = 0;
  for (int64_t r = 0; r < outputs.rows(); ++r) {
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
