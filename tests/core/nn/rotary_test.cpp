// Rotary position embeddings: the table's angles, the turn against a
// double-precision reference of the documented pairs, the relative-position
// property that is their reason to exist (q_i . k_j depends on i - j only),
// the backward as the turn's transpose, V untouched, and the user errors.
#include "core/nn/rotary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::random_tensor;
using testing::weighted_sum;

// 2 sequences of 6 positions, 4 query heads of width 6 over 2 key/value heads.
AttentionShape grouped_shape() {
  AttentionShape shape{2, 6, 4, 6, true};
  shape.kv_heads = 2;
  return shape;
}

double angle(int64_t t, int64_t c, int64_t head_dim) {
  return static_cast<double>(t) *
         std::pow(kDefaultRopeTheta, -2.0 * static_cast<double>(c) / static_cast<double>(head_dim));
}

// A larger base (LLaMA 3's 500000) turns every pair but the first more slowly.
TEST(Rotary, TheBaseSetsEachPairsFrequency) {
  const RotaryTable llama2 = rotary_table(3, 8, kDefaultRopeTheta);
  const RotaryTable llama3 = rotary_table(3, 8, 500000.0);
  for (int64_t c = 0; c < 4; ++c) {
    const double angle = 2.0 * std::pow(500000.0, -2.0 * static_cast<double>(c) / 8.0);
    EXPECT_FLOAT_EQ(llama3.sin[2 * 4 + c], static_cast<float>(std::sin(angle))) << c;
  }
  EXPECT_EQ(llama3.sin[2 * 4], llama2.sin[2 * 4]);  // pair 0 turns by the position itself
  for (int64_t c = 1; c < 4; ++c) EXPECT_LT(llama3.sin[2 * 4 + c], llama2.sin[2 * 4 + c]) << c;
  EXPECT_THROW(rotary_table(3, 8, 0.0), std::invalid_argument);
  EXPECT_THROW(rotary_table(3, 8, -1.0), std::invalid_argument);
}

TEST(Rotary, TableHoldsEachPositionsAngles) {
  const RotaryTable table = rotary_table(5, 8, kDefaultRopeTheta);
  ASSERT_EQ(table.half, 4);
  ASSERT_EQ(table.cos.size(), 20u);
  for (int64_t t = 0; t < 5; ++t)
    for (int64_t c = 0; c < 4; ++c) {
      EXPECT_FLOAT_EQ(table.cos[t * 4 + c], static_cast<float>(std::cos(angle(t, c, 8))));
      EXPECT_FLOAT_EQ(table.sin[t * 4 + c], static_cast<float>(std::sin(angle(t, c, 8))));
    }
  // Position 0 is not turned.
  for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(table.cos[c], 1.0f);
}

TEST(Rotary, TurnsEveryQueryAndKeyHeadAndLeavesValues) {
  const AttentionShape shape = grouped_shape();
  const Tensor before = random_tensor(shape.rows(), shape.qkv_width(), 1);
  Tensor qkv = before.clone();
  const RotaryTable table = rotary_table(shape.seq, shape.head_dim, kDefaultRopeTheta);
  rotary_forward(qkv, shape, table);
  const int64_t half = shape.head_dim / 2;
  for (int64_t r = 0; r < shape.rows(); ++r) {
    const int64_t t = r % shape.seq;
    const auto expect_turned = [&](int64_t column) {
      for (int64_t c = 0; c < half; ++c) {
        const double a = before.at(r, column + c);
        const double b = before.at(r, column + c + half);
        const double theta = angle(t, c, shape.head_dim);
        EXPECT_NEAR(qkv.at(r, column + c), a * std::cos(theta) - b * std::sin(theta), 1e-5);
        EXPECT_NEAR(qkv.at(r, column + c + half), b * std::cos(theta) + a * std::sin(theta), 1e-5);
      }
    };
    for (int64_t h = 0; h < shape.heads; ++h) {
      expect_turned(shape.q_column(h));
      for (int64_t j = 0; j < shape.head_dim; ++j)
        EXPECT_EQ(qkv.at(r, shape.v_column(h) + j), before.at(r, shape.v_column(h) + j));
    }
    for (int64_t g = 0; g < shape.key_value_heads(); ++g)
      expect_turned(shape.k_column(g * shape.group()));
  }
}

// The point of the rotation: a query at position i against a key at j scores
// the same as the same vectors at i + s and j + s.
TEST(Rotary, ScoresDependOnRelativePositionOnly) {
  AttentionShape shape{1, 12, 1, 8, true};
  const RotaryTable table = rotary_table(shape.seq, shape.head_dim, kDefaultRopeTheta);
  const Tensor q = random_tensor(1, 8, 2);
  const Tensor k = random_tensor(1, 8, 3);
  // Every row holds the same q and k, so row t turns them by position t.
  Tensor qkv(shape.rows(), shape.qkv_width());
  for (int64_t r = 0; r < shape.rows(); ++r)
    for (int64_t j = 0; j < 8; ++j) {
      qkv.at(r, shape.q_column(0) + j) = q.data()[j];
      qkv.at(r, shape.k_column(0) + j) = k.data()[j];
    }
  rotary_forward(qkv, shape, table);
  const auto score = [&](int64_t i, int64_t j) {
    double sum = 0;
    for (int64_t c = 0; c < 8; ++c)
      sum +=
          static_cast<double>(qkv.at(i, shape.q_column(0) + c)) * qkv.at(j, shape.k_column(0) + c);
    return sum;
  };
  for (int64_t shift : {1, 3, 7}) {
    EXPECT_NEAR(score(4, 1), score(4 + shift, 1 + shift), 1e-5) << shift;
    EXPECT_NEAR(score(2, 2), score(2 + shift, 2 + shift), 1e-5) << shift;
  }
  EXPECT_GT(std::fabs(score(4, 1) - score(4, 2)), 1e-3);  // but it does depend on i - j
}

// The backward is the transpose: <turn(x), y> = <x, turn_back(y)> for any y,
// which is what makes it x's gradient; and turning back undoes the turn.
TEST(Rotary, BackwardIsTheTranspose) {
  const AttentionShape shape = grouped_shape();
  const RotaryTable table = rotary_table(shape.seq, shape.head_dim, kDefaultRopeTheta);
  const Tensor x = random_tensor(shape.rows(), shape.qkv_width(), 4);
  const Tensor y = random_tensor(shape.rows(), shape.qkv_width(), 5);
  Tensor turned = x.clone();
  rotary_forward(turned, shape, table);
  Tensor back = y.clone();
  rotary_backward(back, shape, table);
  EXPECT_NEAR(weighted_sum(turned, y), weighted_sum(x, back), 1e-4);
  rotary_backward(turned, shape, table);
  testing::expect_close(turned, x, "turned back");
}

TEST(Rotary, OddHeadWidthIsRefusedWithAFix) {
  try {
    rotary_table(4, 5, kDefaultRopeTheta);
    ADD_FAILURE() << "an odd head width was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("head_dim (5) must be even"), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("dim / heads is even"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace pipelab
