#include "core/planner/stage_cost_table.h"

#include <gtest/gtest.h>

#include "core/io/experiment_io.h"
#include "core/sim/experiment_prediction.h"
#include "core/planner/planning_costs.h"

namespace pipelab {
namespace {

// The table's cost of a range is what the simulator's cost model says about
// that range as a stage of a real split, tensor-parallel pairs included.
TEST(StageCostTable, RangesCostWhatTheSimulatorSaysOfTheSameStages) {
  for (const char* name :
       {"tensor_parallel.json", "dp_tp_pp_mix.json", "gpt2_small_predict.json"}) {
    const Experiment experiment =
        load_experiment(std::string(PIPELAB_SOURCE_DIR) + "/examples/" + name);
    const StageCostTable table(experiment);
    const Prediction prediction = predict_experiment(experiment);
    ASSERT_EQ(prediction.cost.stages().size(), static_cast<size_t>(experiment.parallel.stages()));
    for (int s = 0; s < experiment.parallel.stages(); ++s) {
      const StageProfile& profile = prediction.cost.stages()[s];
      const RangeCost& range = table.range(profile.layers.begin, profile.layers.end);
      EXPECT_DOUBLE_EQ(range.microbatch_s,
                       stage_microbatch_s(prediction.cost, s, experiment.parallel.tp,
                                          experiment.parallel.recompute))
          << name << " stage " << s;
      const StageMemory memory = stage_memory(prediction.cost, s);
      EXPECT_EQ(range.memory.weights, memory.weights) << name;
      EXPECT_EQ(range.memory.activations, memory.activations) << name;
      EXPECT_EQ(range.gradient_bytes, profile.gradient_bytes()) << name;
    }
  }
}

TEST(StageCostTable, ASlowerLinkSlowsMessagesOnly) {
  const Experiment experiment =
      load_experiment(std::string(PIPELAB_SOURCE_DIR) + "/examples/mnist_gpipe.json");
  const StageCostTable profile_link(experiment);
  const StageCostTable slow_link(experiment, profile_link.device().link_bandwidth / 10);
  EXPECT_GT(slow_link.message_s(1 << 20), 5 * profile_link.message_s(1 << 20));
  EXPECT_GT(slow_link.allreduce_s(1 << 20, 4), 5 * profile_link.allreduce_s(1 << 20, 4));
  EXPECT_EQ(slow_link.range(0, 2).microbatch_s, profile_link.range(0, 2).microbatch_s);
}

TEST(StageCostTable, RefusesUnitCosts) {
  Experiment experiment =
      load_experiment(std::string(PIPELAB_SOURCE_DIR) + "/examples/mnist_gpipe.json");
  experiment.simulation.profile = "unit";
  EXPECT_THROW(StageCostTable{experiment}, ExperimentError);
}

}  // namespace
}  // namespace pipelab
