#include "core/nn/init.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "core/nn/linear.h"
#include "core/nn/tensor_parallel.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::bitwise_equal;

constexpr uint64_t kSeed = 42;
constexpr int kLayer = 3;
constexpr int64_t kIn = 12;
constexpr int64_t kOut = 8;

std::unique_ptr<LinearLayer> full_layer(uint64_t seed = kSeed, int layer = kLayer) {
  auto linear = std::make_unique<LinearLayer>(layer, kIn, kOut, true, nullptr);
  init_linear(*linear, seed);
  return linear;
}

TEST(InitLinear, ValuesLieInTheBoundAndLookUniform) {
  LinearLayer linear(0, 256, 64, true, nullptr);
  init_linear(linear, kSeed);
  const double bound = 1.0 / std::sqrt(256.0);
  double sum = 0, squares = 0;
  for (float v : linear.weight().to_vector()) {
    EXPECT_LE(std::fabs(v), bound);
    sum += v;
    squares += static_cast<double>(v) * v;
  }
  const double n = static_cast<double>(linear.weight().size());
  EXPECT_NEAR(sum / n, 0.0, 0.05 * bound);
  EXPECT_NEAR(squares / n, bound * bound / 3.0,
              0.05 * bound * bound);  // variance of uniform(-b, b)
  for (float v : linear.bias().to_vector()) EXPECT_LE(std::fabs(v), bound);
}

TEST(InitLinear, DependsOnSeedAndLayerOnly) {
  auto a = full_layer();
  auto b = full_layer();
  EXPECT_TRUE(bitwise_equal(a->weight(), b->weight()));
  EXPECT_TRUE(bitwise_equal(a->bias(), b->bias()));
  EXPECT_FALSE(bitwise_equal(a->weight(), full_layer(kSeed + 1)->weight()));
  EXPECT_FALSE(bitwise_equal(a->weight(), full_layer(kSeed, kLayer + 1)->weight()));
  // Weight and bias streams differ: the bias is not the weight's first row.
  EXPECT_NE(a->bias().at(0, 0), a->weight().at(0, 0));
}

TEST(InitLinear, ColumnParallelShardsConcatenateToTheFullLayer) {
  const auto full = full_layer();
  const int tp = 4;
  for (int shard = 0; shard < tp; ++shard) {
    const MatrixSlice w =
        linear_weight_slice(TensorParallelRole::ColumnParallel, kIn, kOut, tp, shard);
    const MatrixSlice b = linear_bias_slice(TensorParallelRole::ColumnParallel, kOut, tp, shard);
    EXPECT_EQ(w.rows, kIn);
    EXPECT_EQ(w.cols, kOut / tp);
    EXPECT_EQ(w.col_begin, shard * kOut / tp);
    Tensor weight(w.rows, w.cols);
    Tensor bias(1, b.cols);
    init_linear_weight(weight, kSeed, kLayer, kIn, kOut, w.row_begin, w.col_begin);
    init_linear_bias(bias, kSeed, kLayer, kIn, kOut, b.col_begin);
    EXPECT_TRUE(bitwise_equal(weight, copy_slice(full->weight(), w))) << "shard " << shard;
    EXPECT_TRUE(bitwise_equal(bias, copy_slice(full->bias(), b))) << "shard " << shard;
  }
}

TEST(InitLinear, RowParallelShardsStackToTheFullLayer) {
  const auto full = full_layer();
  const int tp = 3;
  Tensor stacked(kIn, kOut);
  for (int shard = 0; shard < tp; ++shard) {
    const MatrixSlice w =
        linear_weight_slice(TensorParallelRole::RowParallel, kIn, kOut, tp, shard);
    EXPECT_EQ(w.rows, kIn / tp);
    EXPECT_EQ(w.cols, kOut);
    Tensor weight(w.rows, w.cols);
    init_linear_weight(weight, kSeed, kLayer, kIn, kOut, w.row_begin, w.col_begin);
    for (int64_t r = 0; r < w.rows; ++r)
      for (int64_t c = 0; c < w.cols; ++c) stacked.at(w.row_begin + r, c) = weight.at(r, c);
    // The bias is whole on every row-parallel shard (added once after the all-reduce).
    const MatrixSlice b = linear_bias_slice(TensorParallelRole::RowParallel, kOut, tp, shard);
    EXPECT_EQ(b.cols, kOut);
  }
  EXPECT_TRUE(bitwise_equal(stacked, full->weight()));
}

TEST(InitLinear, UnevenSplitsAreRejected) {
  EXPECT_THROW(linear_weight_slice(TensorParallelRole::ColumnParallel, kIn, kOut, 3, 0),
               std::invalid_argument);
  EXPECT_THROW(linear_weight_slice(TensorParallelRole::RowParallel, kIn, kOut, 5, 0),
               std::invalid_argument);
  EXPECT_THROW(linear_weight_slice(TensorParallelRole::RowParallel, kIn, kOut, 2, 2),
               std::invalid_argument);
  const MatrixSlice whole = linear_weight_slice(TensorParallelRole::Replicated, kIn, kOut, 5, 1);
  EXPECT_EQ(whole.rows, kIn);
  EXPECT_EQ(whole.cols, kOut);
}

}  // namespace
}  // namespace pipelab
