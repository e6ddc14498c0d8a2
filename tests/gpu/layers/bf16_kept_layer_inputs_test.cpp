// Under bf16-mixed the CUDA stage keeps the inputs of its linears and
// convolutions (but its first layer's) in bf16 (gpu/layers/kept_bf16.h,
// kept_layer_input.h). Their weight gradients read the same bf16 bits as
// before, so every result is the same bit for bit with the context's switch
// on or off, and the stage holds 2 bytes less per kept value, as the memory
// pre-flight counts (bf16_kept_activation_bytes). Skipped without a GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/sim/experiment_prediction.h"
#include "gpu/layers/device_context.h"
#include "gpu/layers/sequential.h"
#include "gpu/executor/memory_preflight.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

enum class Backward { Fused, Split, Recomputed };

// One micro-batch through layers [1, end) of `experiment`'s model on a
// bf16-mixed context: the output, input gradient and weight gradients, and
// the Activations bytes the forward left held.
struct StageRun {
  std::vector<float> y, dx;
  std::vector<std::vector<float>> grads;
  int64_t held_activation_bytes = 0;
};

int64_t activation_bytes(const DeviceContext& context) {
  return context.allocator().current()[static_cast<size_t>(MemoryCategory::Activations)];
}

StageRun run_stage(const Experiment& experiment, bool keep_bf16_inputs, Backward backward) {
  DeviceContext context(0);
  context.set_mixed_bf16(true);
  context.set_keep_bf16_gemm_inputs(keep_bf16_inputs);
  const int end = static_cast<int>(experiment.model.layers.size());
  GpuSequential stage(experiment.model, 1, end, experiment.seed, context);
  const int64_t batch = microbatch_size(experiment);
  const int64_t before = activation_bytes(context);
  DeviceTensor x = DeviceTensor::from_host(testing::random_tensor(batch, stage.input_features(), 1),
                                           &context.allocator(), MemoryCategory::Activations);
  GpuStageActivations saved;
  StageRun run;
  ForwardInfo info;
  info.step = 1;
  DeviceTensor y = stage.forward(std::move(x), info, saved);
  run.held_activation_bytes = activation_bytes(context) - before - y.bytes();
  run.y = y.to_vector();
  DeviceTensor dy =
      DeviceTensor::from_host(testing::random_tensor(batch, stage.output_features(), 2),
                              &context.allocator(), MemoryCategory::Activations);
  if (backward == Backward::Recomputed) {
    stage.drop_activations(saved);
    stage.recompute(saved);
  }
  if (backward == Backward::Split) {
    run.dx = stage.backward_input(std::move(dy), saved).to_vector();
    stage.backward_weight(saved);
  } else {
    run.dx = stage.backward(std::move(dy), saved).to_vector();
  }
  for (const GpuParameter& parameter : stage.parameters())
    run.grads.push_back(parameter.grad->to_vector());
  return run;
}

void expect_same_bits_and_fewer_bytes(const Experiment& experiment, const std::string& what) {
  const int end = static_cast<int>(experiment.model.layers.size());
  Experiment bf16 = experiment;
  bf16.training.precision = Precision::Bf16Mixed;
  const int64_t kept = bf16_kept_activation_bytes(bf16, {1, end});
  ASSERT_GT(kept, 0) << what;
  for (const Backward backward : {Backward::Fused, Backward::Split, Backward::Recomputed}) {
    SCOPED_TRACE(what + ", backward " + std::to_string(static_cast<int>(backward)));
    const StageRun float32 = run_stage(experiment, false, backward);
    const StageRun kept_bf16 = run_stage(experiment, true, backward);
    EXPECT_EQ(kept_bf16.y, float32.y);
    EXPECT_EQ(kept_bf16.dx, float32.dx);
    EXPECT_EQ(kept_bf16.grads, float32.grads);
    // Each kept value holds 2 bytes instead of 4: half the float32 bytes.
    EXPECT_EQ(float32.held_activation_bytes - kept_bf16.held_activation_bytes, kept);
  }
}

TEST(Bf16KeptLayerInputsTest, MlpGivesTheSameBitsWithBf16KeptInputs) {
  PIPELAB_REQUIRE_GPU();
  expect_same_bits_and_fewer_bytes(testing::small_experiment(), "mlp");
}

TEST(Bf16KeptLayerInputsTest, ConvNetGivesTheSameBitsWithBf16KeptInputs) {
  PIPELAB_REQUIRE_GPU();
  expect_same_bits_and_fewer_bytes(
      testing::on_backend(pipelab::testing::two_convolution_experiment(), "cuda"), "conv net");
}

// The output layer of a GPT works per token (GpuPerTokenLayer) on the kept input.
TEST(Bf16KeptLayerInputsTest, GptOutputLayerGivesTheSameBitsWithBf16KeptInputs) {
  PIPELAB_REQUIRE_GPU();
  expect_same_bits_and_fewer_bytes(
      testing::on_backend(pipelab::testing::tiny_gpt_experiment(), "cuda"), "tiny gpt");
}

// Whole runs: recomputing and offloading give back the same bits, so the same
// losses as keeping; zero bubble's BI then BW, tp 2 (a row-parallel linear's
// input is a slice) and dp 2 train close to fp32.
TEST(Bf16KeptLayerInputsTest, MlpLossesStayWhereKeptInputsMove) {
  PIPELAB_REQUIRE_GPU();
  Experiment pp2 = testing::with_plan(testing::small_experiment(), ScheduleKind::OneFOneB, 2, 4);
  pp2.training.precision = Precision::Bf16Mixed;
  const testing::RunOutput kept = testing::run_experiment(pp2);
  ASSERT_EQ(kept.state, RunState::Finished) << kept.error;
  Experiment recompute = pp2;
  recompute.parallel.recompute = true;
  EXPECT_EQ(testing::run_experiment(recompute).losses(), kept.losses()) << "full recompute";
  Experiment offload = pp2;
  offload.parallel.offload = OffloadMode::Activations;
  EXPECT_EQ(testing::run_experiment(offload).losses(), kept.losses()) << "activations offloaded";
  const auto expect_close = [&](Experiment mixed, const std::string& what) {
    Experiment fp32 = mixed;
    fp32.training.precision = Precision::Fp32;
    const testing::RunOutput exact = testing::run_experiment(fp32);
    const testing::RunOutput run = testing::run_experiment(mixed);
    ASSERT_EQ(run.state, RunState::Finished) << what << ": " << run.error;
    // bf16 GEMM inputs, as Bf16MixedRunTest's tolerance (not yet measured on a GPU).
    testing::expect_same_curve(exact.losses(), run.losses(), 1e-1, what);
  };
  expect_close(testing::with_plan(pp2, ScheduleKind::ZeroBubbleH1, 2, 4), "mlp, zb-h1 pp 2");
  expect_close(testing::with_plan(pp2, ScheduleKind::OneFOneB, 1, 2, 1, 2), "mlp, tp 2");
  expect_close(testing::with_plan(pp2, ScheduleKind::OneFOneB, 1, 2, 2), "mlp, dp 2");
}

}  // namespace
}  // namespace pipelab::gpu
