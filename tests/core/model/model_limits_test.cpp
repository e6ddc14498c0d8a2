// describe_layers refuses models past core/model/model_limits.h before any
// size derived from them can overflow.
#include "core/model/model_limits.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/model/model_spec.h"

namespace pipelab {
namespace {

std::string describe_error(const ModelSpec& model) {
  try {
    describe_layers(model);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

ModelSpec linear_model(std::vector<int64_t> input, int64_t out) {
  ModelSpec model;
  model.input = std::move(input);
  model.layers = {LayerSpec{LayerType::Linear, out, true, 0.0}};
  return model;
}

TEST(ModelLimits, InputShapeWhoseProductOverflowsIsRefused) {
  const ModelSpec model = linear_model({int64_t{1} << 40, int64_t{1} << 40}, 10);
  EXPECT_NE(describe_error(model).find("multiply to more than 1073741824"), std::string::npos);
  EXPECT_EQ(input_features(model), kMaxWidth + 1);  // saturates instead of overflowing
  EXPECT_EQ(describe_error(linear_model({1 << 15, 1 << 15}, 10)), "");  // exactly 2^30
}

TEST(ModelLimits, WidthsAndParametersPastTheLimitsAreRefused) {
  EXPECT_NE(describe_error(linear_model({4}, kMaxWidth + 1)).find("linear out = 1073741825 is more"),
            std::string::npos);
  EXPECT_NE(describe_error(linear_model({kMaxWidth}, 2048)).find("more than 1099511627776 parameters"),
            std::string::npos);
  EXPECT_EQ(describe_error(linear_model({kMaxWidth}, 1023)), "");
}

TEST(ModelLimits, MoreLayersThanTheLimitAreRefused) {
  ModelSpec model = linear_model({4}, 4);
  model.layers.resize(kMaxLayers + 1, LayerSpec{LayerType::Relu, 0, true, 0.0});
  EXPECT_NE(describe_error(model).find("has 10001 layers, more than the 10000"), std::string::npos);
  model.layers.resize(kMaxLayers);
  EXPECT_EQ(describe_error(model), "");
}

}  // namespace
}  // namespace pipelab
