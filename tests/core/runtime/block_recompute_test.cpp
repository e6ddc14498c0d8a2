// Full recomputation by block (parallel.recompute = "block", Megatron-LM's
// uniform method) on the cpu backend: each group of recompute_layers blocks
// keeps its input, the forward drops the group's rest once the group has run,
// and the backward rebuilds one group at a time (core/nn/stage_stack.h). It
// trains the same bits as keeping everything, and holds what the simulator
// predicts for it: less than rebuilding the whole stage.
#include <gtest/gtest.h>

#include <string>

#include "core/sim/experiment_prediction.h"
#include "tests/support/gpt_model.h"
#include "tests/support/runtime_test_support.h"

namespace pipelab {
namespace {

// A GPT of four blocks over two stages: two blocks a stage.
Experiment four_block_gpt(ScheduleKind schedule) {
  Experiment experiment = testing::tiny_gpt_experiment();
  experiment.model =
      testing::gpt_model({.seq = 8, .vocab = 16, .dim = 16, .heads = 2, .blocks = 4});
  experiment.model.loss = LossType::CrossEntropy;
  experiment.training.steps = 4;
  return testing::with_plan(experiment, schedule, 2, 4);
}

Experiment by_block(Experiment experiment, int blocks_per_group) {
  experiment.parallel.recompute = true;
  experiment.parallel.recompute_blocks = true;
  experiment.parallel.recompute_layers = blocks_per_group;
  return experiment;
}

int64_t activation_peak(const Trace& trace, int device) {
  int64_t peak = 0;
  for (const MemorySample& sample : trace.memory)
    if (sample.device == device)
      peak = std::max(peak, sample.bytes[static_cast<size_t>(MemoryCategory::Activations)]);
  return peak;
}

TEST(BlockRecompute, TrainsTheSameBitsAsKeepingEveryActivation) {
  for (const ScheduleKind schedule :
       {ScheduleKind::OneFOneB, ScheduleKind::GPipe, ScheduleKind::ZeroBubbleH1}) {
    const Experiment kept = four_block_gpt(schedule);
    const std::vector<double> reference = testing::losses_of(kept, "kept");
    ASSERT_EQ(reference.size(), 4u);
    for (const int group : {1, 2}) {
      const std::string what = std::string(schedule_name(schedule)) + ", " + std::to_string(group) +
                               " block(s) a checkpoint";
      EXPECT_EQ(testing::losses_of(by_block(kept, group), what), reference) << what;
    }
  }
}

TEST(BlockRecompute, HoldsThePredictedActivationsLessThanRebuildingTheStage) {
  for (const ScheduleKind schedule : {ScheduleKind::GPipe, ScheduleKind::OneFOneB}) {
    Experiment stage_unit = four_block_gpt(schedule);
    stage_unit.parallel.recompute = true;
    const testing::RunOutput whole = testing::run_experiment(stage_unit);
    const Experiment block_unit = by_block(four_block_gpt(schedule), 1);
    const testing::RunOutput blocks = testing::run_experiment(block_unit);
    ASSERT_EQ(whole.state, RunState::Finished) << whole.error;
    ASSERT_EQ(blocks.state, RunState::Finished) << blocks.error;
    const Prediction prediction = predict_experiment(block_unit);
    for (int d = 0; d < 2; ++d) {
      const double predicted =
          static_cast<double>(prediction.result.per_device[d]
                                  .peak_bytes[static_cast<size_t>(MemoryCategory::Activations)]);
      const double measured = static_cast<double>(activation_peak(blocks.trace, d));
      EXPECT_NEAR(measured / predicted, 1.0, 0.01)
          << schedule_name(schedule) << " device " << d << ": measured " << measured
          << ", predicted " << predicted;
      EXPECT_LT(activation_peak(blocks.trace, d), activation_peak(whole.trace, d))
          << schedule_name(schedule) << " device " << d;
    }
  }
}

}  // namespace
}  // namespace pipelab
