#include "core/nn/loss.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace pipelab {

LossResult softmax_cross_entropy(const Tensor& logits, std::span<const int32_t> labels,
                                 double scale, bool with_grad) {
  const int64_t batch = logits.rows();
  const int64_t classes = logits.cols();
  if (static_cast<int64_t>(labels.size()) != batch)
    throw std::invalid_argument("cross-entropy got " + std::to_string(labels.size()) +
                                " labels for a batch of " + std::to_string(batch) +
                                "; give one label per sample");
  LossResult result;
  result.samples = batch;
  if (with_grad)
    result.grad = Tensor(batch, classes, logits.allocator(), MemoryCategory::Activations);
  for (int64_t r = 0; r < batch; ++r) {
    const int32_t label = labels[r];
    if (label < 0 || label >= classes)
      throw std::invalid_argument("cross-entropy label " + std::to_string(label) + " of sample " +
                                  std::to_string(r) + " is outside [0, " + std::to_string(classes) +
                                  "); the model's last width must cover every class");
    const float* z = logits.row(r);
    int64_t arg_max = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (z[c] > z[arg_max]) arg_max = c;
    const double max_logit = z[arg_max];
    double sum_exp = 0;
    for (int64_t c = 0; c < classes; ++c)
      sum_exp += std::exp(static_cast<double>(z[c]) - max_logit);
    const double log_sum_exp = max_logit + std::log(sum_exp);
    result.loss_sum += log_sum_exp - static_cast<double>(z[label]);
    if (arg_max == label) ++result.correct;
    if (with_grad) {
      float* g = result.grad.row(r);
      for (int64_t c = 0; c < classes; ++c) {
        const double softmax = std::exp(static_cast<double>(z[c]) - log_sum_exp);
        g[c] = static_cast<float>(scale * (softmax - (c == label ? 1.0 : 0.0)));
      }
    }
  }
  return result;
}

LossResult mean_squared_error(const Tensor& output, const Tensor& target, double scale,
                              bool with_grad) {
  if (!output.same_shape(target))
    throw std::invalid_argument(
        "mse target is " + std::to_string(target.rows()) + " x " + std::to_string(target.cols()) +
        " but the output is " + std::to_string(output.rows()) + " x " +
        std::to_string(output.cols()) + "; the model's last width must equal the target width");
  const int64_t batch = output.rows();
  const int64_t width = output.cols();
  LossResult result;
  result.samples = batch;
  if (with_grad)
    result.grad = Tensor(batch, width, output.allocator(), MemoryCategory::Activations);
  const double grad_factor = width ? 2.0 * scale / static_cast<double>(width) : 0.0;
  for (int64_t r = 0; r < batch; ++r) {
    const float* y = output.row(r);
    const float* t = target.row(r);
    double squares = 0;
    for (int64_t c = 0; c < width; ++c) {
      const double d = static_cast<double>(y[c]) - t[c];
      squares += d * d;
    }
    if (width) result.loss_sum += squares / static_cast<double>(width);
    if (with_grad) {
      float* g = result.grad.row(r);
      for (int64_t c = 0; c < width; ++c)
        g[c] = static_cast<float>(grad_factor * (static_cast<double>(y[c]) - t[c]));
    }
  }
  return result;
}

}  // namespace pipelab
