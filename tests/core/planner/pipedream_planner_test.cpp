#include "core/planner/pipedream_planner.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>

#include "planner_test_support.h"

namespace pipelab {
namespace {

// Every split of the layers into contiguous stages and every replica count
// per stage (at most `groups` in all), each visited once.
void for_each_plan(
    int layers, int groups,
    const std::function<void(const std::vector<LayerRange>&, const std::vector<int>&)>& visit) {
  std::vector<LayerRange> ranges;
  std::vector<int> replicas;
  std::function<void(int, int)> extend = [&](int begin, int groups_left) {
    if (begin == layers) {
      visit(ranges, replicas);
      return;
    }
    for (int end = begin + 1; end <= layers; ++end)
      for (int r = 1; r <= groups_left; ++r) {
        ranges.push_back({begin, end});
        replicas.push_back(r);
        extend(end, groups_left - r);
        ranges.pop_back();
        replicas.pop_back();
      }
  };
  extend(0, groups);
}

struct Exhaustive {
  double best_time = std::numeric_limits<double>::infinity();
  int64_t smallest_memory = std::numeric_limits<int64_t>::max();
};

Exhaustive exhaustive(const StageCostTable& table, int groups, int64_t memory, int microbatches,
                      bool uniform_only) {
  Exhaustive result;
  for_each_plan(table.layer_count(), groups,
                [&](const std::vector<LayerRange>& ranges, const std::vector<int>& replicas) {
                  for (int r : replicas)
                    if (uniform_only && (r != replicas.front() || microbatches % r != 0)) return;
                  const PlannedPipeline plan =
                      pipedream_evaluate(table, ranges, replicas, microbatches);
                  result.smallest_memory = std::min(result.smallest_memory, plan.peak_device_bytes);
                  if (plan.peak_device_bytes <= memory)
                    result.best_time = std::min(result.best_time, plan.slowest_stage_s);
                });
  return result;
}

TEST(PipeDreamPlanner, MatchesExhaustiveSearchOverMemoryLimitsAndLinks) {
  const Experiment experiment = test::uneven_mlp();
  int cases = 0, non_uniform_optima = 0;
  for (const double link :
       {5e9, 2e7}) {  // the profile's link, and a slow one where messages dominate
    const StageCostTable table(experiment, link);
    for (const int groups : {1, 3, 4}) {
      const int microbatches = 8;
      const int64_t smallest = pipedream_minimum_memory(table, groups, microbatches, false);
      EXPECT_EQ(smallest,
                exhaustive(table, groups, INT64_MAX, microbatches, false).smallest_memory);
      EXPECT_EQ(pipedream_minimum_memory(table, groups, microbatches, true),
                exhaustive(table, groups, INT64_MAX, microbatches, true).smallest_memory);
      for (const double slack : {1.0, 1.3, 2.0, 100.0}) {
        const int64_t memory = static_cast<int64_t>(smallest * slack);
        const PlannedPipeline plan = plan_pipedream(table, groups, memory, microbatches);
        ASSERT_TRUE(plan.found());
        EXPECT_EQ(plan.slowest_stage_s,
                  exhaustive(table, groups, memory, microbatches, false).best_time)
            << "groups " << groups << ", memory " << memory << ", link " << link;
        EXPECT_LE(plan.peak_device_bytes, memory);
        EXPECT_LE(plan.groups, groups);
        const PlannedPipeline uniform = plan_pipedream_uniform(table, groups, memory, microbatches);
        if (uniform.found()) {
          EXPECT_TRUE(uniform.uniform());
          EXPECT_EQ(uniform.slowest_stage_s,
                    exhaustive(table, groups, memory, microbatches, true).best_time);
          EXPECT_GE(uniform.slowest_stage_s, plan.slowest_stage_s);
        }
        non_uniform_optima += plan.uniform() ? 0 : 1;
        ++cases;
      }
      EXPECT_FALSE(plan_pipedream(table, groups, smallest - 1, microbatches).found());
    }
  }
  EXPECT_EQ(cases, 24);
  // The search space is worth searching: some optima replicate stages unevenly.
  EXPECT_GT(non_uniform_optima, 0);
}

TEST(PipeDreamPlanner, MoreDevicesNeverMakeThePlanSlower) {
  const StageCostTable table(test::uneven_mlp());
  double previous = std::numeric_limits<double>::infinity();
  for (int groups = 1; groups <= 8; ++groups) {
    const PlannedPipeline plan = plan_pipedream(table, groups, INT64_MAX / 4, 8);
    EXPECT_LE(plan.slowest_stage_s, previous);
    previous = plan.slowest_stage_s;
  }
}

TEST(PipeDreamPlanner, StageTermsFollowTheRecurrence) {
  const StageCostTable table(test::uneven_mlp());
  const RangeCost& range = table.range(2, 4);
  // Two replicas share 8 micro-batches: 4 each, plus their all-reduce and the update.
  const double compute =
      4 * range.microbatch_s + table.allreduce_s(range.gradient_bytes, 2) + range.update_s;
  EXPECT_DOUBLE_EQ(pipedream_stage_s(table, {2, 4}, 2, 8),
                   std::max({compute, 4 * table.message_s(range.input_bytes),
                             4 * table.message_s(range.output_bytes)}));
  // Five groups from here over two replicas: 3 micro-batches in flight, 3 weight versions.
  EXPECT_EQ(pipedream_stage_bytes(table, {2, 4}, 2, 5), table.device_bytes(range, 3, 3, 2));
  // cpu-core: no runtime memory of its own.
  EXPECT_EQ(table.device_bytes(range, 3, 3, 2),
            3 * range.memory.weights + range.memory.gradients + range.memory.optimizer_state +
                3 * range.memory.activations + range.memory.backward_working);
}

// On a GPU every device also holds the CUDA context, cuBLAS's workspace and
// one NCCL communicator per group: here tp 2, the pipeline and, replicated,
// the stage's data-parallel group.
TEST(PipeDreamPlanner, AGpuStageCountsTheRuntimesOwnMemory) {
  const StageCostTable table(test::small_gpt());
  const RangeCost& middle = table.range(1, 3);
  const DeviceProfile& h100 = table.device();
  const int64_t alone = table.device_bytes(middle, 1, 1, 1);
  const int64_t model = middle.memory.weights + middle.memory.gradients +
                        middle.memory.optimizer_state + middle.memory.activations +
                        middle.memory.backward_working;
  EXPECT_EQ(alone - model, h100.runtime_bytes + 2 * h100.collective_group_bytes);
  EXPECT_EQ(table.device_bytes(middle, 1, 1, 2) - alone, h100.collective_group_bytes);
  EXPECT_GT(h100.collective_group_bytes, 0);
}

}  // namespace
}  // namespace pipelab
