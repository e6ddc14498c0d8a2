#include "core/planner/dapple_planner.h"

#include <gtest/gtest.h>

#include <limits>

#include "core/io/experiment_io.h"
#include "planner_test_support.h"

namespace pipelab {
namespace {

// Every (pp, dp, m) the planner may choose, simulated one by one without its bounds.
struct Exhaustive {
  double best_step_s = std::numeric_limits<double>::infinity();
  int64_t smallest_memory = std::numeric_limits<int64_t>::max();
  int candidates = 0;
};

Exhaustive exhaustive(const Experiment& experiment, int devices, int64_t memory) {
  Exhaustive result;
  const int64_t batch = experiment.training.batch_size;
  for (int pp = 1; pp <= static_cast<int>(experiment.model.layers.size()); ++pp)
    for (int dp = 1; dp * pp <= devices; ++dp)
      for (int m = 1; batch % dp == 0 && m <= batch / dp; ++m) {
        const Experiment candidate = dapple_experiment(experiment, dp, pp, m);
        if ((batch / dp) % m != 0 || !validate_experiment(candidate).empty()) continue;
        ++result.candidates;
        const DappleCandidate simulated = simulate_candidate(candidate, std::nullopt);
        result.smallest_memory = std::min(result.smallest_memory, simulated.peak_device_bytes);
        if (simulated.peak_device_bytes <= memory)
          result.best_step_s = std::min(result.best_step_s, simulated.step_s);
      }
  return result;
}

TEST(DapplePlanner, MatchesExhaustiveSearchOverMemoryLimits) {
  const Experiment experiment = test::uneven_mlp();
  for (const int devices : {1, 3, 4}) {
    const Exhaustive all = exhaustive(experiment, devices, std::numeric_limits<int64_t>::max());
    for (const double slack : {1.0, 1.2, 3.0, 1000.0}) {
      const int64_t memory = static_cast<int64_t>(all.smallest_memory * slack);
      const DapplePlan plan = plan_dapple(experiment, devices, memory);
      ASSERT_TRUE(plan.best) << devices << " devices, " << memory << " bytes";
      EXPECT_EQ(plan.best->step_s, exhaustive(experiment, devices, memory).best_step_s);
      EXPECT_LE(plan.best->peak_device_bytes, memory);
      EXPECT_LE(plan.best->dp * plan.best->pp, devices);
      EXPECT_EQ(plan.candidates, all.candidates);
      EXPECT_LE(plan.simulated, plan.candidates);
    }
    const DapplePlan too_small = plan_dapple(experiment, devices, all.smallest_memory - 1);
    EXPECT_FALSE(too_small.best);
    EXPECT_EQ(too_small.smallest_memory, all.smallest_memory);
  }
}

TEST(DapplePlanner, ItsCandidateIsA1F1BExperimentWithTheBalancedSplit) {
  const Experiment candidate = dapple_experiment(test::uneven_mlp(), 2, 3, 4);
  EXPECT_TRUE(validate_experiment(candidate).empty());
  EXPECT_EQ(candidate.parallel.schedule, ScheduleKind::OneFOneB);
  EXPECT_EQ(candidate.parallel.partition, PartitionRule::Balanced);
  const DappleCandidate simulated = simulate_candidate(candidate, std::nullopt);
  EXPECT_EQ(simulated.split.size(), 3u);
  EXPECT_EQ(simulated.stage_peak_bytes.size(), 3u);
  // A slower link can only slow the step down.
  EXPECT_GT(simulate_candidate(candidate, 1e6).step_s, simulated.step_s);
}

}  // namespace
}  // namespace pipelab
