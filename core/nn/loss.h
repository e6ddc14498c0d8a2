// Losses on a stage's final output. Both fuse the forward and the gradient.
//
// Scaling: a step's batch is split into micro-batches (and replicas) whose
// weight gradients accumulate. The gradient returned here is multiplied by
// `scale`, so passing scale = 1 / (samples in the whole batch) makes the
// accumulated gradients equal the gradient of the whole batch's mean loss.
// The loss itself is returned as a sum over the micro-batch's samples, so the
// batch mean is (sum of loss_sum) / (sum of samples) over its micro-batches.
#pragma once

#include <cstdint>
#include <span>

#include "core/nn/tensor.h"

namespace pipelab {

struct LossResult {
  double loss_sum = 0;  // sum over this micro-batch's samples of the per-sample loss
  int64_t correct = 0;  // cross-entropy: samples whose arg-max is the label; mse: 0
  int64_t samples = 0;
  Tensor grad;  // dLoss/d(output) times scale, [batch, width], Activations; empty if not asked

  double mean_loss() const { return samples ? loss_sum / static_cast<double>(samples) : 0.0; }
  double accuracy() const {
    return samples ? static_cast<double>(correct) / static_cast<double>(samples) : 0.0;
  }
};

// Softmax cross-entropy over logits [batch, classes] and one class label per
// row. Per sample: loss = logsumexp(z) - z[label], computed with the row max
// subtracted (stable for any logits); grad = scale * (softmax(z) - onehot(label)).
// Accuracy counts rows whose first maximal logit is the label. Throws
// std::invalid_argument when labels.size() differs from the batch or a label
// is outside [0, classes).
LossResult softmax_cross_entropy(const Tensor& logits, std::span<const int32_t> labels,
                                 double scale, bool with_grad = true);

// Mean squared error, the mean over the batch and the outputs. Per sample:
// loss = sum_j (y_j - t_j)^2 / width; grad = scale * 2 (y - t) / width. Throws
// std::invalid_argument when the shapes differ.
LossResult mean_squared_error(const Tensor& output, const Tensor& target, double scale,
                              bool with_grad = true);

}  // namespace pipelab
