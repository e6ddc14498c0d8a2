// Every preset that trains teaches with a model that learns: opened as the app
// opens it and trained to its last step on this machine, its validation loss
// ends well below where its first step's loss began (chance: ln 3 for the
// spiral, ln vocab for the token sets). A preset of a few steps is about one
// step's timeline or memory, not learning, and says nothing about the loss.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "core/io/experiment_io.h"
#include "core/io/file_text.h"
#include "core/runtime/executor.h"
#include "core/runtime/trainable.h"
#include "tests/support/runtime_test_support.h"

namespace pipelab {
namespace {

// Below this many steps a preset shows a step, not a curve.
constexpr int kLearningSteps = 20;

TEST(PresetsLearn, EveryTrainablePresetLearns) {
  const std::filesystem::path presets = std::filesystem::path(PIPELAB_SOURCE_DIR) / "examples" / "presets";
  int trained = 0;
  for (const auto& entry : std::filesystem::directory_iterator(presets)) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    // As the app reads presets: relative data paths from examples/.
    const Experiment experiment = parse_experiment(read_text_file(entry.path().string(), "preset"),
                                                   (std::filesystem::path(PIPELAB_SOURCE_DIR) / "examples").string());
    if (experiment.training.steps < kLearningSteps) {
      std::printf("[ presets  ] %-34s %d step(s): a step's timeline and memory, not a loss curve\n", name.c_str(),
                  experiment.training.steps);
      continue;
    }
    ASSERT_NO_THROW(check_trainable(experiment));
    const std::string unavailable = backend_unavailable_reason(experiment.backend.type);
    if (!unavailable.empty()) {
      // The one machine capability a preset can need: a GPU for a cuda preset.
      std::printf("[ presets  ] %-34s not trained: %s\n", name.c_str(), unavailable.c_str());
      continue;
    }
    const testing::RunOutput run = testing::run_experiment(experiment);
    ASSERT_EQ(run.state, RunState::Finished) << run.error;
    ASSERT_FALSE(run.trace.steps.empty());
    const double first = run.trace.steps.front().loss;
    const StepMetrics& last = run.trace.steps.back();
    std::printf("[ presets  ] %-34s loss %.3f -> validation %.3f (accuracy %.1f%%)\n", name.c_str(), first,
                last.val_loss, 100 * last.val_accuracy);
    EXPECT_LT(last.val_loss, 0.75 * first) << "the preset's model does not learn";
    ++trained;
  }
  EXPECT_GE(trained, 20);
}

}  // namespace
}  // namespace pipelab
