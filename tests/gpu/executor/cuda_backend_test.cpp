// The CUDA backend seen from the factory and the CLI. Without a GPU (or a
// driver) asking for it is a user error in one line that suggests the CPU
// backend; these run on any machine (and skip on one with a GPU, where the
// executor tests cover the other side).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/cli/cli.h"
#include "core/io/experiment_io.h"
#include "gpu/executor/cuda_executor.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

TEST(CudaBackendTest, RegistersItselfWithTheFactory) {
  register_cuda_backend();
  register_cuda_backend();  // idempotent
  const std::vector<std::string> backends = registered_backends();
  EXPECT_EQ(std::count(backends.begin(), backends.end(), "cuda"), 1);
  EXPECT_EQ(backends.front(), "cpu");
}

TEST(CudaBackendTest, NoDeviceMessageSuggestsTheCpuBackend) {
  const std::string message = no_cuda_device_message("no CUDA device (no driver)");
  EXPECT_EQ(message,
            "backend.type = cuda, but no CUDA device (no driver); use backend.type = cpu "
            "(pipelab-cli: --backend cpu)");
  EXPECT_NE(no_cuda_device_message("").find("no CUDA device"), std::string::npos);
}

TEST(CudaBackendTest, MakeExecutorWithoutAGpuThrowsExperimentError) {
  if (testing::gpu_availability().count > 0) GTEST_SKIP() << "a GPU is present";
  register_cuda_backend();
  EventSink sink;
  try {
    make_executor(testing::small_experiment("cuda"), sink);
    FAIL() << "expected ExperimentError";
  } catch (const ExperimentError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("no CUDA device"), std::string::npos) << message;
    EXPECT_NE(message.find("backend.type = cpu"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // Nothing was started: the sink saw no event.
  EXPECT_TRUE(sink.drain().empty());
}

TEST(CudaBackendTest, CliTrainOnCudaWithoutAGpuIsAUsageErrorInOneLine) {
  if (testing::gpu_availability().count > 0) GTEST_SKIP() << "a GPU is present";
  register_cuda_backend();  // what pipelab-cli's main() does
  const std::filesystem::path config =
      std::filesystem::temp_directory_path() / "pipelab_cuda_backend_test.json";
  save_experiment(testing::small_experiment("cpu"), config.string());
  std::ostringstream out, err;
  const int code =
      run_cli({"train", "--config", config.string(), "--backend", "cuda", "--quiet"}, out, err);
  std::filesystem::remove(config);
  EXPECT_EQ(code, kExitUsage);
  const std::string text = err.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_NE(text.find("no CUDA device"), std::string::npos) << text;
  EXPECT_NE(text.find("backend.type = cpu"), std::string::npos) << text;
  EXPECT_TRUE(out.str().empty()) << out.str();
}

}  // namespace
}  // namespace pipelab::gpu
