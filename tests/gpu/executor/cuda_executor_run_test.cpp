// What only a CUDA run has (what every backend does, the CUDA one included, is
// the conformance suite's, tests/conformance): device memory handed back to
// CUDA after a stop, clean failures for a split that does not fit or an
// impossible allocation, several virtual devices on one GPU, transfers that
// overlap computation, TF32 GEMMs. Skipped without a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include "core/io/experiment_io.h"
#include "core/sim/experiment_prediction.h"
#include "gpu/device/cuda_check.h"
#include "gpu/executor/cuda_executor.h"
#include "gpu/executor/device_mapping.h"
#include "gpu/memory/out_of_memory.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

using Clock = std::chrono::steady_clock;
using pipelab::testing::process_threads;
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
    EXPECT_NE(message.find("out of GPU memory on GPU 0"), std::string::npos) << message;
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

TEST(CudaRunTest, Tf32TrainsCloseToFp32) {
  PIPELAB_REQUIRE_GPU();
  const Experiment fp32 = with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 4);
  Experiment tf32 = fp32;
  tf32.backend.tf32 = true;
  const testing::RunOutput exact = testing::run_experiment(fp32);
  const testing::RunOutput fast = testing::run_experiment(tf32);
  ASSERT_EQ(fast.state, RunState::Finished) << fast.error;
  // TF32 GEMMs keep 10 mantissa bits: about 1e-3 relative per product.
  testing::expect_same_curve(exact.losses(), fast.losses(), 2e-2, "tf32");
  bool announced = false;
  for (const std::string& message : fast.messages)
    announced = announced || message.find("tf32 GEMMs") != std::string::npos;
  EXPECT_TRUE(announced);
}

}  // namespace
}  // namespace pipelab::gpu
