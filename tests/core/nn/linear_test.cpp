#include "core/nn/linear.h"

#include <gtest/gtest.h>

#include "core/nn/init.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::random_tensor;

TEST(Linear, ForwardMatchesADirectSum) {
  LinearLayer layer(0, 7, 5, true, nullptr);
  init_linear(layer, 9);
  const Tensor x = random_tensor(3, 7, 1);
  const Tensor y = layer.forward(x, {});
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 5; ++c) {
      double sum = layer.bias().at(0, c);
      for (int64_t i = 0; i < 7; ++i)
        sum += static_cast<double>(x.at(r, i)) * layer.weight().at(i, c);
      EXPECT_NEAR(y.at(r, c), sum, 1e-6);
    }
}

TEST(Linear, WeightGradientsAccumulateUntilZeroed) {
  LinearLayer layer(0, 4, 3, true, nullptr);
  const Tensor x = random_tensor(2, 4, 2);
  const Tensor dy = random_tensor(2, 3, 3);
  layer.backward_weight(x, dy);
  const Tensor once = layer.weight_grad().clone();
  const Tensor bias_once = layer.bias_grad().clone();
  layer.backward_weight(x, dy);
  for (int64_t i = 0; i < once.size(); ++i)
    EXPECT_FLOAT_EQ(layer.weight_grad().data()[i], 2 * once.data()[i]);
  for (int64_t i = 0; i < bias_once.size(); ++i)
    EXPECT_FLOAT_EQ(layer.bias_grad().data()[i], 2 * bias_once.data()[i]);
  layer.zero_grad();
  for (float g : layer.weight_grad().to_vector()) EXPECT_EQ(g, 0.0f);
  for (float g : layer.bias_grad().to_vector()) EXPECT_EQ(g, 0.0f);
}

}  // namespace
}  // namespace pipelab
