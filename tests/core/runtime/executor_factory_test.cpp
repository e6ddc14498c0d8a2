// make_executor: backend lookup, user errors surfacing before any thread runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/data/dataset.h"
#include "core/io/experiment_io.h"
#include "core/runtime/process_share.h"
#include "tests/support/runtime_test_support.h"

namespace pipelab {
namespace {

std::string error_of(const Experiment& experiment) {
  EventSink sink;
  try {
    make_executor(experiment, sink);
  } catch (const ExperimentError& error) {
    return error.what();
  }
  return "";
}

TEST(ExecutorFactory, CpuIsAlwaysThere) {
  const std::vector<std::string> names = registered_backends();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "cpu");
  EventSink sink;
  std::unique_ptr<Executor> executor = make_executor(testing::small_experiment(), sink);
  ASSERT_NE(executor, nullptr);
  EXPECT_EQ(executor->state(), RunState::Ready);
  EXPECT_EQ(executor->steps_total(), 20);
}

TEST(ExecutorFactory, CudaWithoutTheBackendSaysWhatToDo) {
  Experiment experiment = testing::small_experiment();
  experiment.backend.type = "cuda";
  EXPECT_EQ(error_of(experiment),
            "backend.type = cuda, but this build has no CUDA backend; use backend.type = cpu");
}

TEST(ExecutorFactory, UnknownBackendListsTheRegisteredOnes) {
  Experiment experiment = testing::small_experiment();
  experiment.backend.type = "tpu";
  const std::string message = error_of(experiment);
  EXPECT_NE(message.find("backend.type = 'tpu'"), std::string::npos) << message;
  EXPECT_NE(message.find("cpu"), std::string::npos) << message;
}

TEST(ExecutorFactory, RegisteredBackendsAreUsed) {
  int built = 0;
  register_backend("test-backend",
                   [&](const Experiment& e, EventSink& sink,
                       const ExecutorOptions& options) -> std::unique_ptr<Executor> {
                     ++built;
                     Experiment on_cpu = e;
                     on_cpu.backend.type = "cpu";
                     return make_executor(on_cpu, sink, options);
                   });
  Experiment experiment = testing::small_experiment();
  experiment.backend.type = "test-backend";
  EventSink sink;
  EXPECT_NE(make_executor(experiment, sink), nullptr);
  EXPECT_EQ(built, 1);
  const std::vector<std::string> names = registered_backends();
  EXPECT_NE(std::find(names.begin(), names.end(), "test-backend"), names.end());
}

TEST(ExecutorFactory, OnlyBackendsThatReachAcrossProcessesGetARanksShare) {
  int built = 0;
  const ExecutorFactory on_cpu = [&](const Experiment& e, EventSink& sink,
                                     const ExecutorOptions& options) -> std::unique_ptr<Executor> {
    ++built;
    Experiment cpu = e;
    cpu.backend.type = "cpu";
    return make_executor(cpu, sink, options);
  };
  register_backend("one-process-backend", on_cpu);
  register_backend("spanning-backend", on_cpu, {}, ProcessReach::AcrossProcesses);
  // Every device in this process's share: a run over one "rank", no transport needed.
  Experiment experiment = testing::small_experiment();
  const ProcessShare share = process_share(experiment.parallel.devices(), 1, 0, 0);
  ExecutorOptions options;
  options.process = &share;
  EventSink sink;
  experiment.backend.type = "one-process-backend";
  try {
    make_executor(experiment, sink, options);
    ADD_FAILURE() << "a share given to a one-process backend";
  } catch (const ExperimentError& error) {
    EXPECT_NE(
        std::string(error.what()).find("does not run across processes yet; use backend.type = cpu"),
        std::string::npos)
        << error.what();
  }
  EXPECT_EQ(built, 0);
  experiment.backend.type = "spanning-backend";
  EXPECT_NE(make_executor(experiment, sink, options), nullptr);
  EXPECT_EQ(built, 1);
}

TEST(ExecutorFactory, InvalidExperimentIsAnExperimentError) {
  Experiment experiment = testing::small_experiment();
  experiment.parallel.microbatches = 5;  // does not divide the batch of 32
  EXPECT_FALSE(error_of(experiment).empty());
}

TEST(ExecutorFactory, MalformedDataFileIsADataError) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "pipelab_runtime_bad.csv";
  {
    std::ofstream file(path);
    file << "label,x0,x1\n0,1.0,2.0\n1,oops,3.0\n";
  }
  Experiment experiment = testing::small_experiment();
  experiment.data.source = "csv";
  experiment.data.path = path.string();
  experiment.data.resolved_path = path.string();
  EventSink sink;
  EXPECT_THROW(make_executor(experiment, sink), DataError);
  std::filesystem::remove(path);
}

TEST(ExecutorFactory, DataThatDoesNotFitTheModelIsAnExperimentError) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "pipelab_runtime_wide.csv";
  {
    std::ofstream file(path);
    for (int i = 0; i < 100; ++i) file << i % 3 << ",1,2,3\n";  // 3 features, model takes 2
  }
  Experiment experiment = testing::small_experiment();
  experiment.data.source = "csv";
  experiment.data.path = path.string();
  experiment.data.resolved_path = path.string();
  const std::string message = error_of(experiment);
  EXPECT_NE(message.find("set model.input to [3]"), std::string::npos) << message;
  std::filesystem::remove(path);
}

TEST(ExecutorFactory, RunStateNames) {
  EXPECT_STREQ(run_state_name(RunState::Ready), "ready");
  EXPECT_STREQ(run_state_name(RunState::Running), "running");
  EXPECT_STREQ(run_state_name(RunState::Paused), "paused");
  EXPECT_STREQ(run_state_name(RunState::Finished), "finished");
  EXPECT_STREQ(run_state_name(RunState::Stopped), "stopped");
  EXPECT_STREQ(run_state_name(RunState::Failed), "failed");
}

}  // namespace
}  // namespace pipelab
