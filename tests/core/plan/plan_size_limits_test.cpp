// Splits too large to plan are refused before they are searched or sized:
// the balanced partitioner's search, and the bytes of one micro-batch.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/model/model_limits.h"
#include "core/plan/partition.h"
#include "core/plan/stage_profile.h"

namespace pipelab {
namespace {

ModelSpec relu_stack(int layers) {
  ModelSpec model;
  model.input = {8};
  model.layers.assign(layers, LayerSpec{LayerType::Relu, 0, true, 0.0});
  return model;
}

template <typename Action>
std::string invalid_argument_of(Action action) {
  try {
    action();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(PlanSizeLimits, ABalancedSearchTooLongIsRefusedWithTheWayOut) {
  const ModelSpec model = relu_stack(kMaxLayers);
  ParallelPlan plan;
  plan.pp = 64;
  const std::string message = invalid_argument_of([&] { partition_layers(model, plan); });
  EXPECT_NE(message.find("would search too long for the best split of 10000 layers into pp = 64"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("parallel.partition = uniform"), std::string::npos) << message;
  plan.partition = PartitionRule::Uniform;
  EXPECT_EQ(partition_layers(model, plan).size(), 64u);
  // As many stages as layers: few steps, but a table too large to keep.
  plan.partition = PartitionRule::Params;
  plan.pp = 1000;
  plan.chunks = 10;
  EXPECT_NE(invalid_argument_of([&] { partition_layers(model, plan); }).find("search too long"),
            std::string::npos);
  // A thousand layers split any way stay well inside the limits.
  plan = ParallelPlan{};
  plan.pp = 100;
  EXPECT_EQ(partition_layers(relu_stack(1000), plan).size(), 100u);
}

TEST(PlanSizeLimits, AMicrobatchTooLargeToHoldIsRefused) {
  ModelSpec model = relu_stack(2);
  model.input = {kMaxWidth};
  const std::string message =
      invalid_argument_of([&] { profile_stages(model, ParallelPlan{}, int64_t{1} << 40); });
  EXPECT_NE(message.find("a micro-batch of 1099511627776 samples keeps and sends more than 65536 GiB"),
            std::string::npos)
      << message;
  EXPECT_EQ(profile_stages(model, ParallelPlan{}, 8).size(), 1u);
}

}  // namespace
}  // namespace pipelab
