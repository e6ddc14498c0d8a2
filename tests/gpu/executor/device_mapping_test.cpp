// Virtual devices onto physical GPUs: pure arithmetic, checked without a GPU.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

#include "gpu/executor/device_mapping.h"

namespace pipelab::gpu {
namespace {

TEST(DeviceMappingTest, OneVirtualDevicePerGpuWhenThereAreEnough) {
  EXPECT_EQ(map_virtual_devices(4, 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(map_virtual_devices(3, 8), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(map_virtual_devices(1, 1), (std::vector<int>{0}));
}

TEST(DeviceMappingTest, FewerGpusTakeContiguousBalancedBlocks) {
  EXPECT_EQ(map_virtual_devices(4, 1), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(map_virtual_devices(8, 2), (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
  for (int devices = 1; devices <= 24; ++devices)
    for (int gpus = 1; gpus <= 8; ++gpus) {
      const std::vector<int> mapping = map_virtual_devices(devices, gpus);
      ASSERT_EQ(static_cast<int>(mapping.size()), devices);
      std::map<int, int> load;
      for (size_t d = 0; d < mapping.size(); ++d) {
        ASSERT_GE(mapping[d], 0);
        ASSERT_LT(mapping[d], gpus);
        if (d > 0) {
          // Contiguous: never goes back to an earlier GPU, never skips one.
          EXPECT_GE(mapping[d], mapping[d - 1]);
          EXPECT_LE(mapping[d], mapping[d - 1] + 1);
        }
        ++load[mapping[d]];
      }
      // Every GPU that can be used is used, and loads differ by at most one.
      EXPECT_EQ(static_cast<int>(load.size()), std::min(devices, gpus));
      int least = devices, most = 0;
      for (const auto& [gpu, count] : load) {
        least = std::min(least, count);
        most = std::max(most, count);
      }
      EXPECT_LE(most - least, 1) << devices << " devices on " << gpus << " GPUs";
    }
}

TEST(DeviceMappingTest, RejectsEmptyCounts) {
  EXPECT_THROW(map_virtual_devices(0, 2), std::invalid_argument);
  EXPECT_THROW(map_virtual_devices(2, 0), std::invalid_argument);
}

TEST(DeviceMappingTest, ListsAndDescribesTheMapping) {
  const std::vector<int> mapping = map_virtual_devices(5, 2);  // 0 0 0 1 1
  EXPECT_EQ(devices_on_gpu(mapping, 0), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(devices_on_gpu(mapping, 1), (std::vector<int>{3, 4}));
  EXPECT_FALSE(on_distinct_gpus(mapping, {0, 2}));
  EXPECT_TRUE(on_distinct_gpus(mapping, {2, 3}));
  EXPECT_EQ(device_list_text({0, 1, 2, 5, 7, 8}), "0-2, 5, 7-8");
  EXPECT_EQ(describe_mapping(mapping),
            "5 virtual devices on 2 GPUs: devices 0-2 on GPU 0, "
            "devices 3-4 on GPU 1");
  EXPECT_EQ(describe_mapping({0}), "1 virtual device on 1 GPU: device 0 on GPU 0");
}

TEST(DeviceMappingTest, CollectiveGroupsFollowTheGrid) {
  ParallelPlan plan;
  plan.dp = 2;
  plan.pp = 2;
  plan.tp = 2;  // devices: replica-major, then pipeline rank, then shard
  const CollectiveGroups groups = collective_groups(plan, false);
  EXPECT_EQ(groups.data_parallel,
            (std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(groups.tensor_parallel,
            (std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  // Data parallelism all-reduces; tensor parallelism too, and under sequence
  // parallelism also reduce-scatters and all-gathers.
  using enum GroupCollective;
  const std::vector<CollectiveGroup> plain = groups.with_collectives(false);
  const std::vector<CollectiveGroup> sequence = groups.with_collectives(true);
  ASSERT_EQ(plain.size(), 8u);
  EXPECT_EQ(plain[0].members, groups.data_parallel[0]);
  EXPECT_EQ(plain[0].collectives, std::vector{AllReduce});
  EXPECT_EQ(sequence[0].collectives, std::vector{AllReduce});
  EXPECT_EQ(plain[4].members, groups.tensor_parallel[0]);
  EXPECT_EQ(plain[4].collectives, std::vector{AllReduce});
  EXPECT_EQ(sequence[4].collectives, (std::vector{AllReduce, ReduceScatter, AllGather}));
  // Parameter servers replace the data-parallel all-reduce; one device needs none.
  plan.update = UpdateMode::Async;
  EXPECT_TRUE(collective_groups(plan, false).data_parallel.empty());
  EXPECT_TRUE(collective_groups(ParallelPlan{}, false).data_parallel.empty());
  EXPECT_TRUE(collective_groups(ParallelPlan{}, false).tensor_parallel.empty());
}

// Context parallelism: device = ((replica pp + rank) cp + context) tp + shard.
// The data-parallel group spans the replicas and their context ranks
// (member replica x cp + context), tensor parallelism repeats per context
// rank, and each (replica, rank, shard) gets a ring over its context ranks
// that all-gathers and reduce-scatters.
TEST(DeviceMappingTest, ContextGroupsSplitEachSequenceAndJoinTheDataParallelGroup) {
  ParallelPlan plan;
  plan.dp = 2;
  plan.cp = 2;
  plan.tp = 2;
  const CollectiveGroups groups = collective_groups(plan, false);
  EXPECT_EQ(groups.data_parallel, (std::vector<std::vector<int>>{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(groups.tensor_parallel,
            (std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(groups.context_parallel,
            (std::vector<std::vector<int>>{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  using enum GroupCollective;
  const std::vector<CollectiveGroup> listed = groups.with_collectives(false);
  ASSERT_EQ(listed.size(), groups.all().size());
  ASSERT_EQ(listed.size(), 2u + 4u + 4u);
  EXPECT_EQ(listed.back().members, groups.context_parallel.back());
  EXPECT_EQ(listed.back().collectives, (std::vector{AllGather, ReduceScatter}));
  // One replica: the context ranks alone form the data-parallel group.
  plan.dp = 1;
  plan.tp = 1;
  EXPECT_EQ(collective_groups(plan, false).data_parallel, (std::vector<std::vector<int>>{{0, 1}}));
  EXPECT_EQ(collective_groups(plan, false).context_parallel,
            (std::vector<std::vector<int>>{{0, 1}}));
}

TEST(DeviceMappingTest, ExpertGroupsSpreadTheExpertsAndSumTheirHolders) {
  ParallelPlan plan;
  plan.dp = 4;
  plan.ep = 2;
  plan.pp = 2;  // device = replica x 2 + pipeline rank
  const CollectiveGroups groups = collective_groups(plan, true);
  // Replicas {0, 1} and {2, 3} share each stage's experts...
  EXPECT_EQ(groups.expert_parallel,
            (std::vector<std::vector<int>>{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  // ...and replicas {0, 2} and {1, 3} hold the same ones.
  EXPECT_EQ(groups.expert_data_parallel,
            (std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(groups.all().size(), groups.data_parallel.size() + 8);
  // The all-to-alls' groups run all-to-alls, the holders' all-reduces, in all()'s order.
  const std::vector<CollectiveGroup> listed = groups.with_collectives(false);
  ASSERT_EQ(listed.size(), groups.all().size());
  for (size_t i = 0; i < listed.size(); ++i) EXPECT_EQ(listed[i].members, groups.all()[i]);
  EXPECT_EQ(listed[groups.data_parallel.size()].collectives,
            std::vector{GroupCollective::AllToAll});
  EXPECT_EQ(listed.back().collectives, std::vector{GroupCollective::AllReduce});
  // A model without experts needs neither.
  EXPECT_TRUE(collective_groups(plan, false).expert_parallel.empty());
  EXPECT_TRUE(collective_groups(plan, false).expert_data_parallel.empty());
  // One group holding every expert: nothing to sum over; parameter servers
  // replace the sum, not the all-to-all.
  plan.ep = 4;
  EXPECT_EQ(collective_groups(plan, true).expert_parallel,
            (std::vector<std::vector<int>>{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_TRUE(collective_groups(plan, true).expert_data_parallel.empty());
  plan.ep = 2;
  plan.update = UpdateMode::Async;
  EXPECT_EQ(collective_groups(plan, true).expert_parallel.size(), 4u);
  EXPECT_TRUE(collective_groups(plan, true).expert_data_parallel.empty());
}

TEST(DeviceMappingTest, RanksTakeTheirLocalRankModuloTheGpus) {
  // A GPU per rank: each its own.
  for (int local_rank = 0; local_rank < 4; ++local_rank)
    EXPECT_EQ(gpu_for_local_rank(local_rank, 4), local_rank);
  // Fewer GPUs than ranks on the node: in turn.
  EXPECT_EQ(gpu_for_local_rank(2, 2), 0);
  EXPECT_EQ(gpu_for_local_rank(3, 2), 1);
  // One GPU: every rank on it.
  for (int local_rank = 0; local_rank < 3; ++local_rank)
    EXPECT_EQ(gpu_for_local_rank(local_rank, 1), 0);
  EXPECT_THROW(gpu_for_local_rank(0, 0), std::invalid_argument);
  EXPECT_THROW(gpu_for_local_rank(-1, 2), std::invalid_argument);
  // A rank's devices all on its GPU; the other ranks' on none here.
  EXPECT_EQ(map_rank_devices(6, 2, 2, 1), (std::vector<int>{-1, -1, 1, 1, -1, -1}));
}

TEST(DeviceMappingTest, GroupsWithADeviceElsewhereCrossProcesses) {
  // pp 2 x dp 2 on two ranks of two devices: rank 1 runs devices 2 and 3.
  ParallelPlan plan;
  plan.dp = 2;
  plan.pp = 2;
  const CollectiveGroups groups = collective_groups(plan, false);
  ASSERT_EQ(groups.data_parallel.size(), 2u);
  for (const std::vector<int>& members : groups.data_parallel)
    EXPECT_TRUE(crosses_processes(members, 2, 2)) << "a replica per rank";
  EXPECT_FALSE(crosses_processes({2, 3}, 2, 2)) << "a pipeline link inside rank 1";
  EXPECT_TRUE(crosses_processes({1, 2}, 2, 2));
  EXPECT_FALSE(crosses_processes({0, 1, 2, 3}, 0, 4)) << "one process runs everything";
}

}  // namespace
}  // namespace pipelab::gpu
