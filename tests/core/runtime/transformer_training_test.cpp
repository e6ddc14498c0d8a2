// A GPT learns for real on the CPU executor: 2 blocks of width 64 and 4 heads
// learn the copy task (16 tokens, the answer half counted) to high token
// accuracy on held-out sequences within seconds.
#include <gtest/gtest.h>

#include <chrono>

#include "tests/support/runtime_test_support.h"

namespace pipelab {
namespace {

TEST(TransformerTraining, TinyGptLearnsToCopy) {
  Experiment experiment = testing::tiny_gpt_experiment();
  experiment.model.input = {16};
  experiment.model.layers[0].dim = 64;
  experiment.model.layers[1].heads = 4;
  experiment.model.layers[2].heads = 4;
  experiment.data.samples = 2048;
  experiment.training.batch_size = 64;
  experiment.training.steps = 40;
  experiment.training.eval_every = 40;
  experiment.parallel.microbatches = 2;

  const auto start = std::chrono::steady_clock::now();
  const testing::RunOutput run = testing::run_experiment(experiment);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  const StepMetrics& last = run.trace.steps.back();
  // Accuracy over the answer positions (the loss mask), with teacher forcing.
  EXPECT_GT(last.val_accuracy, 0.9) << "after " << run.trace.steps.size() << " steps";
  EXPECT_LT(last.val_loss, 0.5);
  RecordProperty("seconds", std::to_string(seconds));
  RecordProperty("val_accuracy", std::to_string(last.val_accuracy));
}

}  // namespace
}  // namespace pipelab
