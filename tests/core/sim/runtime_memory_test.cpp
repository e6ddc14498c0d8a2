// The software's own memory (core/sim/runtime_memory.h): one NCCL
// communicator per group a device belongs to, and the simulator holding the
// context, cuBLAS's workspace and those buffers as "workspace" from the start.
#include "core/sim/runtime_memory.h"

#include <gtest/gtest.h>

#include "core/io/experiment_io.h"
#include "core/sim/experiment_prediction.h"

namespace pipelab {
namespace {

TEST(RuntimeMemory, EveryGroupADeviceBelongsToHoldsACommunicator) {
  // Megatron-LM's GPT-3 split: tp, pp and the gradients' data-parallel group.
  DeviceCommunicators three =
      device_communicators(/*tp*/ 8, /*cp*/ 1, /*pp*/ 8, /*dp*/ 16, /*ep*/ 1);
  EXPECT_EQ(three.groups, 3);
  EXPECT_EQ(three.all_to_all_peers, 0);
  // Context parallelism alone: its ring and the gradients' group over cp ranks.
  EXPECT_EQ(device_communicators(1, 2, 1, 1, 1).groups, 2);
  // Experts over 4 of 8 replicas: the gradients' group, the all-to-all with 3
  // peers, and the experts' own data-parallel pairs.
  const DeviceCommunicators experts = device_communicators(1, 1, 1, 8, 4);
  EXPECT_EQ(experts.groups, 3);
  EXPECT_EQ(experts.all_to_all_peers, 3);
  EXPECT_EQ(device_communicators(1, 1, 1, 4, 4).groups, 2);  // each expert on one replica
  EXPECT_EQ(device_communicators(1, 1, 1, 1, 1).groups, 0);  // one device talks to no one
}

TEST(RuntimeMemory, TheSimulatorHoldsItAsWorkspaceFromTheStart) {
  Experiment experiment =
      load_experiment(std::string(PIPELAB_SOURCE_DIR) + "/examples/gpt2_small_predict.json");
  const Prediction prediction = predict_experiment(experiment);
  const DeviceProfile& h100 = prediction.cost.device();
  // tp 2 x pp 2: two communicators on every device.
  const int64_t expected = h100.runtime_bytes + 2 * h100.collective_group_bytes;
  EXPECT_EQ(expected, int64_t{432 + 2 * 688} << 20);
  ASSERT_EQ(prediction.result.per_device.size(), 4u);
  for (const DeviceSimStats& device : prediction.result.per_device)
    EXPECT_EQ(device.peak_bytes[static_cast<size_t>(MemoryCategory::Workspace)], expected);
  for (const MemorySample& sample : prediction.result.trace.memory) {
    if (sample.t == 0) {
      EXPECT_EQ(sample.bytes[static_cast<size_t>(MemoryCategory::Workspace)], expected);
    }
  }

  // A CPU's threads hold none.
  experiment.simulation.profile = "cpu-core";
  for (const DeviceSimStats& device : predict_experiment(experiment).result.per_device)
    EXPECT_EQ(device.peak_bytes[static_cast<size_t>(MemoryCategory::Workspace)], 0);
}

}  // namespace
}  // namespace pipelab
