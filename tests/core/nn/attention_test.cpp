// Attention core: forward against a double-precision reference (causal and
// not, short and spanning several causal tiles), the qkv gradient against
// central differences, kept versus recomputed
// probabilities, and stability for large scores.
#include "core/nn/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::expect_gradient_matches;
using testing::random_tensor;
using testing::weighted_sum;

AttentionShape small_shape(bool causal) { return {2, 4, 2, 3, causal}; }

// Naive double-precision attention over the documented layout.
std::vector<double> reference_attention(const Tensor& qkv, const AttentionShape& shape) {
  const int64_t d = shape.head_dim;
  std::vector<double> out(shape.rows() * shape.width(), 0.0);
  const auto at = [&](int64_t b, int64_t t, int64_t h, int part, int64_t j) {
    return static_cast<double>(qkv.at(b * shape.seq + t, (3 * h + part) * d + j));
  };
  for (int64_t b = 0; b < shape.batch; ++b)
    for (int64_t h = 0; h < shape.heads; ++h)
      for (int64_t i = 0; i < shape.seq; ++i) {
        std::vector<double> weights(shape.seq, 0.0);
        double total = 0;
        for (int64_t j = 0; j < shape.seq; ++j) {
          if (shape.causal && j > i) continue;
          double score = 0;
          for (int64_t c = 0; c < d; ++c) score += at(b, i, h, 0, c) * at(b, j, h, 1, c);
          weights[j] = std::exp(score / std::sqrt(static_cast<double>(d)));
          total += weights[j];
        }
        for (int64_t j = 0; j < shape.seq; ++j)
          for (int64_t c = 0; c < d; ++c)
            out[(b * shape.seq + i) * shape.width() + h * d + c] +=
                weights[j] / total * at(b, j, h, 2, c);
      }
  return out;
}

class AttentionTest : public ::testing::TestWithParam<bool> {};

TEST_P(AttentionTest, ForwardMatchesDoubleReference) {
  const AttentionShape shape = small_shape(GetParam());
  const Tensor qkv = random_tensor(shape.rows(), shape.qkv_width(), 1, -2.0f, 2.0f);
  Tensor out(shape.rows(), shape.width());
  Tensor probabilities(shape.probability_rows(), shape.seq);
  attention_forward(qkv, shape, out, &probabilities);
  const std::vector<double> expected = reference_attention(qkv, shape);
  for (int64_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out.data()[i], expected[i], 1e-5) << i;
  // Every row of P sums to 1 and is zero above a causal diagonal.
  for (int64_t r = 0; r < probabilities.rows(); ++r) {
    const int64_t query = r % shape.seq;
    double sum = 0;
    for (int64_t j = 0; j < shape.seq; ++j) {
      sum += probabilities.at(r, j);
      if (shape.causal && j > query) {
        EXPECT_EQ(probabilities.at(r, j), 0.0f);
      }
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

TEST_P(AttentionTest, QkvGradientMatchesFiniteDifferences) {
  const AttentionShape shape = small_shape(GetParam());
  Tensor qkv = random_tensor(shape.rows(), shape.qkv_width(), 2);
  const Tensor upstream = random_tensor(shape.rows(), shape.width(), 3);
  const auto loss = [&] {
    Tensor out(shape.rows(), shape.width());
    attention_forward(qkv, shape, out, nullptr);
    return weighted_sum(out, upstream);
  };
  Tensor probabilities(shape.probability_rows(), shape.seq);
  Tensor out(shape.rows(), shape.width());
  attention_forward(qkv, shape, out, &probabilities);
  Tensor dqkv(shape.rows(), shape.qkv_width());
  attention_backward(qkv, &probabilities, upstream, shape, dqkv);
  expect_gradient_matches(qkv, loss, dqkv, "attention dqkv", 1e-2, 1e-3, 1e-2);
}

TEST_P(AttentionTest, RecomputedProbabilitiesGiveTheSameResults) {
  const AttentionShape shape = small_shape(GetParam());
  const Tensor qkv = random_tensor(shape.rows(), shape.qkv_width(), 4);
  const Tensor upstream = random_tensor(shape.rows(), shape.width(), 5);
  Tensor kept(shape.probability_rows(), shape.seq);
  Tensor out_kept(shape.rows(), shape.width());
  attention_forward(qkv, shape, out_kept, &kept);
  Tensor out_lean(shape.rows(), shape.width());
  attention_forward(qkv, shape, out_lean, nullptr);
  EXPECT_TRUE(testing::bitwise_equal(out_kept, out_lean));

  Tensor recomputed(shape.probability_rows(), shape.seq);
  attention_probabilities(qkv, shape, recomputed);
  EXPECT_TRUE(testing::bitwise_equal(kept, recomputed));

  Tensor dqkv_kept(shape.rows(), shape.qkv_width());
  attention_backward(qkv, &kept, upstream, shape, dqkv_kept);
  Tensor dqkv_lean(shape.rows(), shape.qkv_width());
  attention_backward(qkv, nullptr, upstream, shape, dqkv_lean);
  EXPECT_TRUE(testing::bitwise_equal(dqkv_kept, dqkv_lean));
}

// A sequence of 70 spans several of the causal products' 32-query tiles (the
// last one partial): forward against the reference, gradient against central
// differences, and the probabilities zero above the diagonal.
TEST_P(AttentionTest, LongSequenceSpanningSeveralTiles) {
  const AttentionShape shape{1, 70, 2, 4, GetParam()};
  Tensor qkv = random_tensor(shape.rows(), shape.qkv_width(), 8, -2.0f, 2.0f);
  Tensor out(shape.rows(), shape.width());
  Tensor probabilities(shape.probability_rows(), shape.seq);
  attention_forward(qkv, shape, out, &probabilities);
  const std::vector<double> expected = reference_attention(qkv, shape);
  for (int64_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out.data()[i], expected[i], 1e-5) << i;
  for (int64_t r = 0; r < probabilities.rows(); ++r)
    for (int64_t j = r % shape.seq + 1; shape.causal && j < shape.seq; ++j)
      EXPECT_EQ(probabilities.at(r, j), 0.0f) << r << ", " << j;

  const Tensor upstream = random_tensor(shape.rows(), shape.width(), 9);
  const auto loss = [&] {
    Tensor lean(shape.rows(), shape.width());
    attention_forward(qkv, shape, lean, nullptr);
    return weighted_sum(lean, upstream);
  };
  Tensor dqkv(shape.rows(), shape.qkv_width());
  attention_backward(qkv, &probabilities, upstream, shape, dqkv);
  expect_gradient_matches(qkv, loss, dqkv, "attention dqkv, 70 tokens", 1e-2, 1e-3, 1e-2);
}

INSTANTIATE_TEST_SUITE_P(Attention, AttentionTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Causal" : "Full"; });

TEST(Attention, LargeScoresStayFinite) {
  const AttentionShape shape{1, 5, 1, 4, true};
  Tensor qkv = random_tensor(shape.rows(), shape.qkv_width(), 6, -1.0f, 1.0f);
  for (int64_t i = 0; i < qkv.size(); ++i) qkv.data()[i] *= 300.0f;  // scores ~1e5
  Tensor out(shape.rows(), shape.width());
  Tensor probabilities(shape.probability_rows(), shape.seq);
  attention_forward(qkv, shape, out, &probabilities);
  Tensor dqkv(shape.rows(), shape.qkv_width());
  attention_backward(qkv, &probabilities, random_tensor(shape.rows(), shape.width(), 7), shape,
                     dqkv);
  for (int64_t i = 0; i < out.size(); ++i) EXPECT_TRUE(std::isfinite(out.data()[i]));
  for (int64_t i = 0; i < dqkv.size(); ++i) EXPECT_TRUE(std::isfinite(dqkv.data()[i]));
}

}  // namespace
}  // namespace pipelab
