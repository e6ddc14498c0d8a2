// What a CUDA run reports and how it is controlled: one measured event per
// scheduled op on the run's clock, memory samples from the caching allocator
// that return to the baseline after every synchronous step, start / pause /
// step / resume / stop like the CPU backend, clean failures for a split that
// does not fit or an impossible allocation, several virtual devices on one
// GPU. Skipped without a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <thread>

#include "core/io/experiment_io.h"
#include "core/io/experiment_prediction.h"
#include "executor_test_support.h"
#include "gpu/device/cuda_check.h"
#include "gpu/executor/cuda_executor.h"
#include "gpu/executor/device_mapping.h"
#include "gpu/memory/out_of_memory.h"
#include "gpu_test_support.h"

namespace pipelab::gpu {
namespace {

using Clock = std::chrono::steady_clock;
using testing::small_experiment;
using testing::with_plan;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int64_t category(const MemoryBytes& bytes, MemoryCategory which) {
  return bytes[static_cast<int>(which)];
}

// Weights, gradients and momentum of each stage (params x 4 bytes each), plus
// the cuBLAS workspace every virtual device keeps.
std::vector<int64_t> baseline_bytes(const Experiment& experiment) {
  std::vector<int64_t> bytes;
  for (const StageProfile& profile :
       profile_stages(experiment.model, experiment.parallel, microbatch_size(experiment)))
    bytes.push_back(3 * profile.params * 4 + DeviceContext::kCublasWorkspaceBytes);
  return bytes;
}

int process_threads() {
  int count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task"))
    ++count;
  return count;
}

TEST(CudaRunTest, EveryScheduledOpIsReportedOnceOnTheRunClock) {
  PIPELAB_REQUIRE_GPU();
  const Experiment experiment = with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 2, 2, 2);
  EventSink sink;
  CudaExecutor executor(experiment, sink);
  executor.start();
  executor.wait();
  ASSERT_EQ(executor.state(), RunState::Finished) << executor.error();
  testing::RunOutput output;
  testing::drain_into(sink, output);

  std::map<std::pair<int, int>, int> scheduled, reported;
  for (const TrainingWindow& window : executor.program().windows())
    for (int d = 0; d < executor.device_count(); ++d)
      for (const Op& op : window.schedule->devices[d]) ++scheduled[{d, static_cast<int>(op.kind)}];
  double last_end = 0;
  for (const TraceEvent& event : output.trace.events) {
    ++reported[{event.device, static_cast<int>(event.op.kind)}];
    EXPECT_EQ(event.device, event.op.device);
    EXPECT_LE(event.t_begin, event.t_end);
    EXPECT_GE(event.t_begin, 0.0);
    last_end = std::max(last_end, event.t_end);
    if (is_communication(event.op.kind) && event.op.kind != OpKind::AllReduce) {
      EXPECT_GT(event.bytes, 0) << op_label(event.op);
    }
  }
  EXPECT_EQ(reported, scheduled);

  // Compute ops of a device run on its compute stream, one after another.
  for (int d = 0; d < executor.device_count(); ++d) {
    double previous_end = 0;
    for (const TraceEvent& event : output.trace.events) {
      if (event.device != d || !is_compute(event.op.kind)) continue;
      EXPECT_GE(event.t_begin, previous_end - 1e-6) << op_label(event.op);
      previous_end = event.t_end;
    }
  }

  ASSERT_EQ(output.trace.steps.size(), 20u);
  for (const StepMetrics& step : output.trace.steps) {
    EXPECT_TRUE(std::isfinite(step.loss));
    EXPECT_GT(step.step_time_s, 0.0);
    EXPECT_NEAR(step.samples_per_s * step.step_time_s, 32.0, 1e-6);
    EXPECT_GE(step.bubble_measured, 0.0);
    EXPECT_LT(step.bubble_measured, 1.0);
    EXPECT_TRUE(std::isfinite(step.bubble_simulated));
  }
  EXPECT_TRUE(std::isfinite(output.trace.steps.back().val_loss));
  ASSERT_FALSE(output.trace.memory.empty());
  for (const MemorySample& sample : output.trace.memory) EXPECT_LE(sample.t, last_end + 1.0);
  ASSERT_FALSE(output.messages.empty());
  EXPECT_EQ(output.messages.front().rfind("cuda backend: 8 virtual devices", 0), 0u)
      << output.messages.front();
  EXPECT_EQ(output.messages.back().rfind("finished 20 steps", 0), 0u) << output.messages.back();
}

TEST(CudaRunTest, SynchronousStepsReturnMemoryToTheBaseline) {
  PIPELAB_REQUIRE_GPU();
  const Experiment experiment = with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 4, 2);
  const std::vector<int64_t> baseline = baseline_bytes(experiment);
  EventSink sink;
  ExecutorOptions options;
  options.steps = 3;
  CudaExecutor executor(experiment, sink, options);
  for (int d = 0; d < executor.device_count(); ++d)
    EXPECT_EQ(executor.allocator(d).current_total(), baseline[d % 2]) << "device " << d;
  for (int step = 1; step <= 3; ++step) {
    executor.step();
    testing::wait_for_pause(executor);
    ASSERT_EQ(executor.steps_done(), step) << executor.error();
    testing::RunOutput output;
    testing::drain_into(sink, output);
    std::map<int, MemoryBytes> last;
    bool saw_activations = false;
    for (const MemorySample& sample : output.trace.memory) {
      last[sample.device] = sample.bytes;
      saw_activations = saw_activations || category(sample.bytes, MemoryCategory::Activations) > 0;
    }
    EXPECT_TRUE(saw_activations) << "step " << step;
    ASSERT_EQ(last.size(), 4u);
    for (const auto& [device, bytes] : last) {
      EXPECT_EQ(total_bytes(bytes), baseline[device % 2]) << "device " << device;
      EXPECT_EQ(category(bytes, MemoryCategory::Activations), 0);
      EXPECT_EQ(category(bytes, MemoryCategory::CommBuffers), 0);
      EXPECT_EQ(executor.allocator(device).current_total(), baseline[device % 2]);
    }
  }
  executor.stop();
}

TEST(CudaRunTest, StepPauseResumeGiveTheStraightRunsNumbers) {
  PIPELAB_REQUIRE_GPU();
  const Experiment experiment = with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 4, 2);
  const std::vector<double> straight = testing::run_experiment(experiment).losses();
  EventSink sink;
  ExecutorOptions options;
  options.start_paused = true;
  CudaExecutor executor(experiment, sink, options);
  executor.start();
  testing::wait_for_pause(executor);
  EXPECT_EQ(executor.state(), RunState::Paused);
  EXPECT_EQ(executor.steps_done(), 0);
  for (int step = 1; step <= 3; ++step) {
    executor.step();
    testing::wait_for_pause(executor);
    EXPECT_EQ(executor.state(), RunState::Paused);
    EXPECT_EQ(executor.steps_done(), step);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(executor.steps_done(), 3);
  executor.resume();
  executor.wait();
  EXPECT_EQ(executor.state(), RunState::Finished);
  testing::RunOutput output;
  testing::drain_into(sink, output);
  testing::expect_same_curve(straight, output.losses(), 1e-6, "stepped");
}

TEST(CudaRunTest, StopMidRunLeavesNoThreadOrDeviceMemory) {
  PIPELAB_REQUIRE_GPU();
  const Experiment experiment = with_plan(small_experiment(), ScheduleKind::GPipe, 2, 4, 2);
  testing::run_experiment(experiment, {});  // warm-up: CUDA's own threads and caches exist now
  PIPELAB_CUDA_CHECK(cudaSetDevice(0));
  size_t free_before = 0, total = 0;
  PIPELAB_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
  const int threads_before = process_threads();

  EventSink sink;
  {
    ExecutorOptions options;
    options.steps = 1000000;
    CudaExecutor executor(experiment, sink, options);
    const std::vector<int64_t> baseline = baseline_bytes(experiment);
    executor.start();
    while (executor.steps_done() < 2) std::this_thread::sleep_for(std::chrono::microseconds(100));
    const Clock::time_point before = Clock::now();
    executor.stop();
    EXPECT_LT(seconds_since(before), 1.0);
    EXPECT_EQ(executor.state(), RunState::Stopped);
    EXPECT_LT(executor.steps_done(), 1000000);
    for (int d = 0; d < executor.device_count(); ++d)
      EXPECT_EQ(executor.allocator(d).current_total(), baseline[d % 2]) << "device " << d;
  }
  EXPECT_EQ(process_threads(), threads_before);
  size_t free_after = 0;
  PIPELAB_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
  // Every block went back to CUDA (a little slack for the driver's own pools).
  EXPECT_GE(static_cast<int64_t>(free_after), static_cast<int64_t>(free_before) - (16ll << 20));
  // And the last samples say so too.
  testing::RunOutput output;
  testing::drain_into(sink, output);
  std::map<int, int64_t> last_total;
  for (const MemorySample& sample : output.trace.memory)
    last_total[sample.device] = total_bytes(sample.bytes);
  ASSERT_EQ(last_total.size(), 4u);
  for (const auto& [device, bytes] : last_total) EXPECT_EQ(bytes, 0) << "device " << device;
}

TEST(CudaRunTest, ASplitThatDoesNotFitFailsBeforeAllocatingAndTheAppGoesOn) {
  PIPELAB_REQUIRE_GPU();
  Experiment huge = small_experiment();
  const auto linear = [](int64_t out) { return LayerSpec{LayerType::Linear, out, true, 0.0}; };
  huge.model.layers = {linear(200000), linear(200000), linear(3)};
  EventSink sink;
  try {
    CudaExecutor executor(huge, sink);
    FAIL() << "expected ExperimentError";
  } catch (const ExperimentError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("does not fit in GPU memory"), std::string::npos) << message;
    EXPECT_NE(message.find("GPU 0 (virtual device 0)"), std::string::npos) << message;
    EXPECT_NE(message.find("free"), std::string::npos) << message;
  }
  // Nothing was allocated, so nothing was sampled.
  EXPECT_TRUE(sink.drain().memory.empty());
  // The process is fine: the next run trains.
  const testing::RunOutput next = testing::run_experiment(small_experiment());
  EXPECT_EQ(next.state, RunState::Finished) << next.error;
}

TEST(CudaRunTest, AnImpossibleAllocationThrowsAndTheAllocatorGoesOn) {
  PIPELAB_REQUIRE_GPU();
  DeviceContext context(0);
  try {
    DeviceBuffer buffer(int64_t{1} << 50, &context.allocator(), MemoryCategory::Activations);
    FAIL() << "a petabyte fitted";
  } catch (const GpuOutOfMemory& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("out of GPU memory on device 0"), std::string::npos) << message;
    EXPECT_NE(message.find("activations"), std::string::npos) << message;
  }
  EXPECT_EQ(context.allocator().current()[static_cast<int>(MemoryCategory::Activations)], 0);
  DeviceTensor fine(64, 64, &context.allocator(), MemoryCategory::Activations);
  fine.fill(2.0f);
  EXPECT_EQ(fine.to_vector()[4095], 2.0f);
}

TEST(CudaRunTest, SeveralVirtualDevicesShareAGpu) {
  PIPELAB_REQUIRE_GPU();
  int gpus = 0;
  PIPELAB_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  const Experiment experiment = with_plan(small_experiment(), ScheduleKind::GPipe, 4, 4, 2);
  EventSink sink;
  CudaExecutor executor(experiment, sink);
  const std::vector<int> expected = map_virtual_devices(8, gpus);
  for (int d = 0; d < 8; ++d) EXPECT_EQ(executor.gpu_of(d), expected[d]) << "device " << d;
  // Neighbours on one GPU exchange messages by copies (NCCL refuses them).
  for (int d = 0; d + 1 < 8; ++d) {
    if (executor.gpu_of(d) == executor.gpu_of(d + 1)) {
      EXPECT_FALSE(executor.routes().uses_nccl(d, d + 1));
    }
  }
  executor.start();
  executor.wait();
  ASSERT_EQ(executor.state(), RunState::Finished) << executor.error();
  testing::RunOutput output;
  testing::drain_into(sink, output);
  const testing::RunOutput cpu = testing::run_experiment(testing::on_backend(experiment, "cpu"));
  testing::expect_same_curve(cpu.losses(), output.losses(), 1e-4, "8 virtual devices");
}

TEST(CudaRunTest, TransfersOverlapComputation) {
  PIPELAB_REQUIRE_GPU();
  // Large enough that a forward takes a while: stage 0 of GPipe sends micro-
  // batch i on its comm stream while computing micro-batch i + 1.
  Experiment experiment = small_experiment();
  const auto linear = [](int64_t out) { return LayerSpec{LayerType::Linear, out, true, 0.0}; };
  const LayerSpec relu{LayerType::Relu, 0, true, 0.0};
  experiment.model.layers = {linear(2048), relu, linear(2048), relu, linear(2048), relu, linear(3)};
  experiment.data.samples = 5000;
  experiment.training.batch_size = 2048;
  experiment.training.steps = 3;
  experiment.training.optimizer.lr = 0.001;
  experiment = with_plan(experiment, ScheduleKind::GPipe, 2, 8);
  const testing::RunOutput run = testing::run_experiment(experiment);
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  int overlapping = 0;
  for (const TraceEvent& send : run.trace.events) {
    if (send.device != 0 || send.op.kind != OpKind::SendActivation) continue;
    for (const TraceEvent& compute : run.trace.events)
      if (compute.device == 0 && is_compute(compute.op.kind) && compute.t_begin < send.t_end &&
          send.t_begin < compute.t_end) {
        ++overlapping;
        break;
      }
  }
  EXPECT_GT(overlapping, 0);
}

}  // namespace
}  // namespace pipelab::gpu
