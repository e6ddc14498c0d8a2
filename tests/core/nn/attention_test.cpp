// Attention core: forward against a double-precision reference (causal and
// not, short and spanning several causal tiles), the qkv gradient against
// central differences, kept versus recomputed
// probabilities, and stability for large scores; grouped-query and
// multi-query attention likewise, with the documented column layout.
#include "core/nn/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
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
  // part 0, 1, 2: head h's q, or the k or v of its query group.
  const auto at = [&](int64_t b, int64_t t, int64_t h, int part, int64_t j) {
    const int64_t column = part == 0   ? shape.q_column(h)
                           : part == 1 ? shape.k_column(h)
                                       : shape.v_column(h);
    return static_cast<double>(qkv.at(b * shape.seq + t, column + j));
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

// Grouped-query attention: 4 query heads over 2 key/value heads (and over
// 1: multi-query), causal and not, against the reference and central
// differences: the shared k and v gradients sum over their query heads.
TEST(GroupedQueryAttention, ForwardAndGradientMatch) {
  for (int64_t kv_heads : {2, 1})
    for (bool causal : {true, false}) {
      const std::string label = "kv_heads " + std::to_string(kv_heads) + (causal ? " causal" : "");
      AttentionShape shape{2, 5, 4, 2, causal};
      shape.kv_heads = kv_heads;
      EXPECT_EQ(shape.qkv_width(), (4 + 2 * kv_heads) * 2);
      Tensor qkv = random_tensor(shape.rows(), shape.qkv_width(), 40, -2.0f, 2.0f);
      Tensor out(shape.rows(), shape.width());
      Tensor probabilities(shape.probability_rows(), shape.seq);
      attention_forward(qkv, shape, out, &probabilities);
      const std::vector<double> expected = reference_attention(qkv, shape);
      for (int64_t i = 0; i < out.size(); ++i)
        EXPECT_NEAR(out.data()[i], expected[i], 1e-5) << label;

      const Tensor upstream = random_tensor(shape.rows(), shape.width(), 41);
      const auto loss = [&] {
        Tensor lean(shape.rows(), shape.width());
        attention_forward(qkv, shape, lean, nullptr);
        return weighted_sum(lean, upstream);
      };
      Tensor dqkv(shape.rows(), shape.qkv_width());
      attention_backward(qkv, &probabilities, upstream, shape, dqkv);
      expect_gradient_matches(qkv, loss, dqkv, "attention dqkv, " + label, 1e-2, 1e-3, 1e-2);
      Tensor recomputed(shape.rows(), shape.qkv_width());
      attention_backward(qkv, nullptr, upstream, shape, recomputed);
      EXPECT_TRUE(testing::bitwise_equal(dqkv, recomputed)) << label;
    }
}

// A group of one (kv_heads = heads) is the ungrouped layout, bit for bit.
TEST(GroupedQueryAttention, OneHeadPerGroupIsPlainAttention) {
  const AttentionShape plain = small_shape(true);
  AttentionShape grouped = plain;
  grouped.kv_heads = plain.heads;
  EXPECT_EQ(grouped.qkv_width(), plain.qkv_width());
  for (int64_t h = 0; h < plain.heads; ++h) {
    EXPECT_EQ(grouped.q_column(h), 3 * h * plain.head_dim);
    EXPECT_EQ(grouped.k_column(h), (3 * h + 1) * plain.head_dim);
    EXPECT_EQ(grouped.v_column(h), (3 * h + 2) * plain.head_dim);
  }
}

}  // namespace
}  // namespace pipelab
