#include "core/sim/cost_model.h"

#include <gtest/gtest.h>

#include "core/io/hardware_catalogue.h"
#include "tests/support/gpt_model.h"

#include <algorithm>
#include <stdexcept>

namespace pipelab {
namespace {

Op make_op(OpKind kind, int stage = 0, int64_t bytes = 0, int device = 0) {
  Op op;
  op.kind = kind;
  op.stage = stage;
  op.bytes = bytes;
  op.device = device;
  return op;
}

TEST(CostModelTest, UnitCostsGiveEachKindItsCost) {
  const CostModel cost = CostModel::unit(UnitCosts{2, 3, 5, 7, 11});
  EXPECT_TRUE(cost.is_unit());
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::Forward)), 2);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::Backward)), 3 + 5);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::BackwardInput)), 3);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::BackwardWeight)), 5);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::Recompute)), 2);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::Update)), 11);
  for (OpKind kind : {OpKind::SendActivation, OpKind::RecvGradient, OpKind::AllReduce,
                      OpKind::PushGradient, OpKind::PullWeights})
    EXPECT_DOUBLE_EQ(cost.duration(make_op(kind, 0, 12345)), 7) << op_kind_name(kind);
  EXPECT_DOUBLE_EQ(cost.collective_duration(make_op(OpKind::AllReduce), 8), 7);
}

TEST(CostModelTest, MemoryBoundKernelsRunAtTheMemoryBandwidth) {
  StageProfile stage;
  stage.forward_flops = 1e12;
  stage.backward_input_flops = 2e12;
  stage.backward_weight_flops = 1e12;
  stage.forward_memory_bytes = 3e9;
  stage.backward_memory_bytes = 6e9;
  const DeviceProfile h100 = *find_device_profile("h100");
  const CostModel cost = CostModel::from_profiles({stage}, h100, 0);
  const double flops = h100.flops_per_s, bandwidth = h100.memory_bandwidth;
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::Forward)), 1e12 / flops + 3e9 / bandwidth);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::Recompute)), 1e12 / flops + 3e9 / bandwidth);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::BackwardInput)), 2e12 / flops + 6e9 / bandwidth);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::BackwardWeight)), 1e12 / flops);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::Backward)), 3e12 / flops + 6e9 / bandwidth);
}

TEST(CostModelTest, NegativeUnitCostIsRejected) {
  EXPECT_THROW(CostModel::unit(UnitCosts{1, -1, 1, 0, 0}), std::invalid_argument);
}

TEST(CostModelTest, ProfileTimesComeFromFlopsAndBandwidth) {
  StageProfile stage;
  stage.forward_flops = 2e9;
  stage.backward_input_flops = 3e9;
  stage.backward_weight_flops = 1e9;
  stage.params = 1000;
  DeviceProfile device;
  device.name = "test";
  device.flops_per_s = 1e10;
  device.memory_bandwidth = 1e9;
  device.link_bandwidth = 1e8;
  device.link_latency_s = 1e-3;
  const CostModel cost = CostModel::from_profiles({stage}, device, 2);
  EXPECT_FALSE(cost.is_unit());
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::Forward)), 0.2);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::Recompute)), 0.2);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::Backward)), 0.4);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::BackwardInput)), 0.3);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::BackwardWeight)), 0.1);
  // Adam: read w, g, m, v and write w, m, v: 7 floats = 28 bytes per parameter.
  EXPECT_EQ(CostModel::optimizer_bytes_per_param(2), 28);
  EXPECT_EQ(CostModel::optimizer_bytes_per_param(0), 12);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::Update)), 1000 * 28 / 1e9);
  // Point to point: latency + bytes / bandwidth.
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::SendActivation, 0, 1'000'000)), 1e-3 + 1e-2);
  // Ring all-reduce over 4: 2 * 3/4 * bytes / bandwidth + 6 latencies.
  EXPECT_DOUBLE_EQ(cost.collective_duration(make_op(OpKind::AllReduce, 0, 1'000'000), 4),
                   1.5 * 1e-2 + 6e-3);
  EXPECT_DOUBLE_EQ(cost.collective_duration(make_op(OpKind::AllReduce, 0, 1'000'000), 1), 0);
}

TEST(CostModelTest, MissingStageProfileIsReported) {
  StageProfile stage;
  stage.forward_flops = 1;
  const CostModel cost = CostModel::from_profiles({stage}, *find_device_profile("cpu-core"), 0);
  EXPECT_THROW(cost.duration(make_op(OpKind::Forward, 3)), std::invalid_argument);
}

TEST(CostModelTest, SlowdownStretchesComputeOnlyOnThatDevice) {
  CostModel cost = CostModel::unit(UnitCosts{1, 1, 1, 0.5, 0});
  cost.set_compute_slowdown(2, 3.0);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::Forward, 0, 0, 2)), 3);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::Backward, 0, 0, 2)), 6);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::Forward, 0, 0, 1)), 1);
  EXPECT_DOUBLE_EQ(cost.duration(make_op(OpKind::SendActivation, 0, 0, 2)), 0.5);
  EXPECT_THROW(cost.set_compute_slowdown(0, 0.0), std::invalid_argument);
}

TEST(CostModelTest, KnownDeviceProfiles) {
  const std::vector<std::string> names = device_profile_names();
  for (const char* name : {"cpu-core", "h100", "h200"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    const auto profile = find_device_profile(name);
    ASSERT_TRUE(profile.has_value()) << name;
    EXPECT_EQ(profile->name, name);
    EXPECT_GT(profile->flops_per_s, 0);
    EXPECT_GT(profile->memory_bandwidth, 0);
    EXPECT_GT(profile->link_bandwidth, 0);
    EXPECT_GT(profile->memory_bytes, 0);
  }
  EXPECT_FALSE(find_device_profile("tpu").has_value());
  // The GPUs share a chip; the H200 has more and faster memory.
  const DeviceProfile h100 = *find_device_profile("h100");
  const DeviceProfile h200 = *find_device_profile("h200");
  EXPECT_EQ(h100.flops_per_s, h200.flops_per_s);
  EXPECT_GT(h200.memory_bytes, h100.memory_bytes);
  EXPECT_GT(h200.memory_bandwidth, h100.memory_bandwidth);
  EXPECT_GT(h100.flops_per_s, 100 * find_device_profile("cpu-core")->flops_per_s);
}

}  // namespace
}  // namespace pipelab

namespace pipelab {
namespace {

// A pass of small kernels takes as long as launching them: the launch-bound
// floor of a GPU running a tiny model; large kernels hide their launches.
TEST(CostModelTest, APassTakesAtLeastItsKernelLaunches) {
  DeviceProfile device = *find_device_profile("h100");
  ASSERT_GT(device.kernel_launch_s, 0);
  StageProfile stage;
  stage.forward_flops = 1e3;  // nothing to compute
  stage.forward_kernels = 10;
  stage.backward_input_kernels = 12;
  stage.backward_weight_kernels = 6;
  const CostModel tiny = CostModel::from_profiles({stage}, device, 2);
  EXPECT_DOUBLE_EQ(tiny.duration(Op{OpKind::Forward}), 10 * device.kernel_launch_s);
  EXPECT_DOUBLE_EQ(tiny.duration(Op{OpKind::Backward}), 18 * device.kernel_launch_s);
  EXPECT_DOUBLE_EQ(tiny.duration(Op{OpKind::BackwardWeight}), 6 * device.kernel_launch_s);
  stage.forward_flops = 1e12;  // a second of FP32 work hides ten launches
  const CostModel large = CostModel::from_profiles({stage}, device, 2);
  EXPECT_DOUBLE_EQ(large.duration(Op{OpKind::Forward}), 1e12 / device.flops_per_s);
  // A CPU core calls functions: no launch cost.
  EXPECT_EQ(find_device_profile("cpu-core")->kernel_launch_s, 0);
}

// The kernels of a GPT's passes, layer by layer (stage_profile.cpp's layer_kernels).
TEST(CostModelTest, AStageCountsItsLayersKernels) {
  const ModelSpec model = testing::gpt_model({.seq = 16, .vocab = 16, .dim = 32, .heads = 2, .blocks = 2});
  ParallelPlan plan;
  const StageProfile whole = profile_stages(model, plan, 4).at(0);
  // Embedding 1, each block 9 + 3 (the attention core), the norm 1, the head 1.
  EXPECT_EQ(whole.forward_kernels, 1 + 2 * 12 + 1 + 1);
  EXPECT_EQ(whole.backward_input_kernels, 0 + 2 * 12 + 1 + 1);
  // Each block's 4 GEMMs, 4 bias gradients and 2 norms; the embedding's
  // scatter; the norm's; the head's GEMM and bias gradient.
  EXPECT_EQ(whole.backward_weight_kernels, 2 * 10 + 1 + 1 + 2);
  // Under context parallelism the attention core runs once per ring step.
  plan.cp = 2;
  EXPECT_EQ(profile_stages(model, plan, 4).at(0).forward_kernels, whole.forward_kernels + 2 * 3);
}

}  // namespace
}  // namespace pipelab
