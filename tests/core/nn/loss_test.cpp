#include "core/nn/loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace pipelab {
namespace {

TEST(SoftmaxCrossEntropy, EqualLogitsCostLogOfTheClassCount) {
  const Tensor logits(2, 4);  // all zero
  const std::vector<int32_t> labels = {1, 3};
  const LossResult result = softmax_cross_entropy(logits, labels, 1.0);
  EXPECT_NEAR(result.loss_sum, 2 * std::log(4.0), 1e-12);
  EXPECT_NEAR(result.mean_loss(), std::log(4.0), 1e-12);
  // Ties go to the first class, which neither label is.
  EXPECT_EQ(result.correct, 0);
  // softmax = 1/4 everywhere; minus one at the label.
  EXPECT_FLOAT_EQ(result.grad.at(0, 1), 0.25f - 1.0f);
  EXPECT_FLOAT_EQ(result.grad.at(0, 0), 0.25f);
}

TEST(SoftmaxCrossEntropy, HugeLogitsStayFinite) {
  const Tensor logits =
      Tensor::from_values(2, 3, {1000.0f, 0.0f, -1000.0f, -500.0f, 500.0f, 499.0f});
  const std::vector<int32_t> labels = {0, 2};
  const LossResult result = softmax_cross_entropy(logits, labels, 0.5);
  ASSERT_TRUE(std::isfinite(result.loss_sum));
  // Row 0 is certain and right (loss ~ 0). Row 1: logsumexp = 500 + log(1 + e^-1),
  // minus the label logit 499, is 1 + log(1 + e^-1) = log(e + 1).
  EXPECT_NEAR(result.loss_sum, std::log(1.0 + std::exp(1.0)), 1e-9);
  EXPECT_EQ(result.correct, 1);
  EXPECT_DOUBLE_EQ(result.accuracy(), 0.5);
  for (float g : result.grad.to_vector()) EXPECT_TRUE(std::isfinite(g));
  // The gradient is scaled: the label's entry of row 1 is 0.5 * (softmax - 1).
  const double softmax_label = 1.0 / (1.0 + std::exp(1.0));
  EXPECT_NEAR(result.grad.at(1, 2), 0.5 * (softmax_label - 1.0), 1e-7);
}

TEST(SoftmaxCrossEntropy, RejectsBadLabels) {
  const Tensor logits(2, 3);
  const std::vector<int32_t> out_of_range = {0, 3};
  EXPECT_THROW(softmax_cross_entropy(logits, out_of_range, 1.0), std::invalid_argument);
  const std::vector<int32_t> too_few = {0};
  EXPECT_THROW(softmax_cross_entropy(logits, too_few, 1.0), std::invalid_argument);
}

TEST(MeanSquaredError, IsTheMeanOverBatchAndOutputs) {
  const Tensor output = Tensor::from_values(2, 2, {1.0f, 2.0f, 3.0f, 4.0f});
  const Tensor target = Tensor::from_values(2, 2, {0.0f, 2.0f, 1.0f, 1.0f});
  const LossResult result = mean_squared_error(output, target, 0.5);
  // Squared errors 1, 0, 4, 9: per-sample means 0.5 and 6.5, batch mean 3.5.
  EXPECT_DOUBLE_EQ(result.loss_sum, 7.0);
  EXPECT_DOUBLE_EQ(result.mean_loss(), 3.5);
  // grad = scale * 2 (y - t) / width = 0.5 * (y - t).
  EXPECT_EQ(result.grad.to_vector(), (std::vector<float>{0.5f, 0.0f, 1.0f, 1.5f}));
  EXPECT_THROW(mean_squared_error(output, Tensor(2, 3), 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace pipelab
