// Host-only checks of the run's NCCL bookkeeping (comm_world.h): which GPU
// sets need a communicator, how many each GPU takes part in, and the abort
// state. No GPU needed: a CommWorld makes no NCCL call until a group is asked.
#include <gtest/gtest.h>

#include <vector>

#include "core/comm/run_control.h"
#include "gpu/comm/comm_world.h"

namespace pipelab::gpu {
namespace {

using Sets = std::vector<std::vector<int>>;

TEST(CommWorldTest, OneCommunicatorPerDistinctGpuSet) {
  // Eight virtual devices, two per GPU (0 0 1 1 2 2 3 3).
  const std::vector<int> gpu_of_device = {0, 0, 1, 1, 2, 2, 3, 3};
  const Sets device_groups = {
      {0, 1},        // on one GPU: device-to-device copies, no NCCL
      {1, 2},        // GPUs 0-1
      {0, 3},        // GPUs 0-1 again: the same communicator
      {3, 5},        // GPUs 1-2
      {7, 4},        // GPUs 3-2, listed backwards
      {0, 2, 4, 6},  // an all-reduce over GPUs 0-3
      {0, 2, 3},     // GPU 1 twice: same-GPU fallback, no NCCL
  };
  EXPECT_EQ(nccl_gpu_sets(device_groups, gpu_of_device),
            (Sets{{0, 1}, {0, 1, 2, 3}, {1, 2}, {2, 3}}));
  EXPECT_TRUE(nccl_gpu_sets({{0, 1, 2}}, {0, 0, 0}).empty());
  EXPECT_TRUE(nccl_gpu_sets({{5}}, {0, 0, 0, 0, 0, 1}).empty());
}

TEST(CommWorldTest, CountsTheCommunicatorsOfEachGpuWithTheWorld) {
  // The pairs of a 3-GPU pipeline, plus the world they are split from.
  EXPECT_EQ(nccl_communicators_per_gpu({{0, 1}, {1, 2}}, 3), (std::vector<int>{2, 3, 2}));
  // When one set is the world already, it is not counted twice.
  EXPECT_EQ(nccl_communicators_per_gpu({{0, 1}}, 2), (std::vector<int>{1, 1}));
  EXPECT_EQ(nccl_communicators_per_gpu({{0, 1}, {0, 1, 2}}, 3), (std::vector<int>{2, 2, 1}));
  // GPUs in no set take part in nothing, the world included.
  EXPECT_EQ(nccl_communicators_per_gpu({{1, 2}}, 4), (std::vector<int>{0, 1, 1, 0}));
  EXPECT_EQ(nccl_communicators_per_gpu({}, 2), (std::vector<int>{0, 0}));
}

TEST(CommWorldTest, AbortRefusesLaterLaunches) {
  CommWorld world({1, 0, 1});
  EXPECT_EQ(world.communicators(), 0);  // made on first use only
  EXPECT_FALSE(world.aborted());
  { const auto lock = world.lock_for_launch(); }
  world.abort();
  world.abort();  // idempotent
  EXPECT_TRUE(world.aborted());
  EXPECT_THROW(world.lock_for_launch(), RunStopped);
}

}  // namespace
}  // namespace pipelab::gpu
