#include "core/cli/run_prediction.h"
#include "core/runtime/host_memory_check.h"

#include <gtest/gtest.h>

#include "core/io/experiment_io.h"
#include "core/sim/predicted_memory.h"
#include "core/runtime/executor.h"

namespace pipelab {
namespace {

TEST(HostMemoryCheck, ReadsTheAvailableMemory) {
  const auto available = available_host_memory();
  ASSERT_TRUE(available.has_value()) << "/proc/meminfo has no MemAvailable";
  EXPECT_GT(*available, 0);
}

TEST(HostMemoryCheck, AcceptsARunThatFits) {
  const Experiment experiment = default_experiment();
  const std::vector<int64_t> predicted = predicted_peak_bytes(experiment);
  EXPECT_NO_THROW(check_host_memory(experiment, predicted, int64_t{1} << 30));
}

TEST(HostMemoryCheck, RefusesARunThatDoesNotFitWithTheNumbers) {
  const Experiment experiment = default_experiment();
  const std::vector<int64_t> predicted = predicted_peak_bytes(experiment);
  try {
    // Room for the data set and 1000 bytes more: not for the model.
    check_host_memory(experiment, predicted, synthetic_data_bytes(experiment.data) + 1000);
    FAIL() << "a run larger than the free memory was accepted";
  } catch (const ExperimentError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("needs about"), std::string::npos) << message;
    EXPECT_NE(message.find("available"), std::string::npos) << message;
    EXPECT_NE(message.find("recompute"), std::string::npos) << message;
  }
}

TEST(HostMemoryCheck, RefusesAHugeSyntheticDataSet) {
  Experiment experiment = default_experiment();
  experiment.data.samples = int64_t{1} << 40;
  const std::vector<int64_t> predicted = predicted_peak_bytes(default_experiment());
  EXPECT_THROW(check_host_memory(experiment, predicted, int64_t{1} << 30), ExperimentError);
}

// Found reviewing the fuzz harness's pre-flight step: samples x features x 8
// bytes overflowed int64 before it could be compared with the free memory.
TEST(HostMemoryCheck, ASampleCountWhoseBytesOverflowIsRefused) {
  Experiment experiment = default_experiment();
  experiment.data.source = "blobs";
  experiment.data.features = 1000;
  experiment.data.samples = int64_t{1} << 62;
  EXPECT_GT(synthetic_data_bytes(experiment.data), int64_t{1} << 62);
  const std::vector<int64_t> predicted = predicted_peak_bytes(default_experiment());
  try {
    check_host_memory(experiment, predicted, int64_t{16} << 30);
    FAIL() << "2^62 samples were accepted";
  } catch (const ExperimentError& error) {
    EXPECT_NE(std::string(error.what()).find("data.samples = 4611686018427387904 needs about"),
              std::string::npos)
        << error.what();
  }
}

TEST(HostMemoryCheck, MakeExecutorRefusesAModelLargerThanTheMachine) {
  Experiment experiment = default_experiment();
  // 1e9 x 64 weights after it (widths stay under kMaxWidth): far beyond any test machine.
  experiment.model.layers[0].out = 1'000'000'000;
  experiment.model.layers[2].out = 64;
  EventSink sink;
  try {
    ExecutorOptions options;
    options.prediction = predict_run(experiment);
    make_executor(experiment, sink, options);
    FAIL() << "a model of tens of GiB was accepted";
  } catch (const ExperimentError& error) {
    EXPECT_NE(std::string(error.what()).find("needs about"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace pipelab
