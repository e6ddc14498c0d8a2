#include "core/trace/trace_events.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

TEST(MemoryCategory, NamesAreDistinctSnakeCase) {
  std::set<std::string> names;
  for (int category = 0; category < kMemoryCategoryCount; ++category) {
    names.insert(memory_category_name(static_cast<MemoryCategory>(category)));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kMemoryCategoryCount));
  EXPECT_STREQ(memory_category_name(MemoryCategory::Weights), "weights");
  EXPECT_STREQ(memory_category_name(MemoryCategory::OptimizerState), "optimizer_state");
  EXPECT_STREQ(memory_category_name(MemoryCategory::Workspace), "workspace");
}

TEST(MemoryCategory, TotalBytesSumsEveryCategoryOnTheDevice) {
  MemoryBytes bytes{};
  int64_t expected = 0;
  for (int category = 0; category < kMemoryCategoryCount; ++category) {
    bytes[static_cast<size_t>(category)] = int64_t{1} << (category + 30);  // past 32 bits
    if (category != static_cast<int>(MemoryCategory::Host)) expected += int64_t{1} << (category + 30);
  }
  EXPECT_EQ(total_bytes(bytes), expected);
  EXPECT_EQ(total_bytes(MemoryBytes{}), 0);
}

TEST(DescribeDevices, FollowsThePlanLayoutReplicaThenRankThenShard) {
  const int dp = 2, tp = 2, pp = 3;
  const auto devices = describe_devices(dp, tp, pp, 1);
  ASSERT_EQ(devices.size(), static_cast<size_t>(dp * tp * pp));
  for (size_t i = 0; i < devices.size(); ++i) {
    const DeviceInfo& info = devices[i];
    EXPECT_EQ(info.device, static_cast<int>(i));
    EXPECT_EQ(info.device, (info.replica * pp + info.pipeline_rank) * tp + info.shard);
    ASSERT_EQ(info.stages.size(), 1u);
    EXPECT_EQ(info.stages[0], info.pipeline_rank);
  }
  // Device 9 = (1 * 3 + 1) * 2 + 1: replica 1, rank 1, shard 1.
  EXPECT_EQ(devices[9].label, "device 9 · stage 1 · replica 1 · shard 1");
}

TEST(DescribeDevices, LabelsWithoutTensorParallelismOmitTheShard) {
  const auto devices = describe_devices(2, 1, 4, 1);
  EXPECT_EQ(devices[5].label, "device 5 · stage 1 · replica 1");
  EXPECT_EQ(devices[0].label, "device 0 · stage 0 · replica 0");
}

TEST(DescribeDevices, InterleavedDevicesListEveryStageTheyHold) {
  const int pp = 4, chunks = 2;
  const auto devices = describe_devices(1, 1, pp, chunks);
  ASSERT_EQ(devices.size(), 4u);
  EXPECT_EQ(devices[1].stages, (std::vector<int>{1, 5}));
  EXPECT_EQ(devices[1].label, "device 1 · stages 1,5 · replica 0");
  // Every virtual stage lives on exactly one device.
  std::set<int> stages;
  for (const DeviceInfo& info : devices) stages.insert(info.stages.begin(), info.stages.end());
  EXPECT_EQ(stages.size(), static_cast<size_t>(pp * chunks));
}

TEST(DescribeDevices, RejectsCountsBelowOne) {
  EXPECT_THROW(describe_devices(0, 1, 1, 1), std::invalid_argument);
  EXPECT_THROW(describe_devices(1, 1, 1, 0), std::invalid_argument);
  try {
    describe_devices(1, -2, 1, 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("tp"), std::string::npos) << error.what();
  }
}

TEST(Trace, DeviceCountAndLabelFallBackToEvents) {
  Trace trace;
  EXPECT_EQ(device_count(trace), 0);
  trace.devices = describe_devices(1, 1, 2, 1);
  EXPECT_EQ(device_count(trace), 2);
  TraceEvent event;
  event.device = 3;
  trace.events.push_back(event);
  EXPECT_EQ(device_count(trace), 4);
  EXPECT_EQ(device_label(trace, 1), trace.devices[1].label);
  EXPECT_EQ(device_label(trace, 3), "device 3");
}

}  // namespace
}  // namespace pipelab
