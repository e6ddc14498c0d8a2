// Context parallelism (parallel.cp) trains as one device does: cp ranks each
// hold two chunks of every sequence (context_split.h), their attention
// gathers the whole sequence's keys and values and sends dk and dv home, and
// the data-parallel group, which spans the context ranks, sums the weight
// gradients. The loss curve stays the one device's within 1e-5 relative in
// FP32 (the sums are the same, reassociated), with tensor and sequence
// parallelism, pipelines, data parallelism and every ZeRO stage, rotary and
// grouped-query attention. The trace shows the attention's context-parallel
// collectives as the schedule lists them, and each rank holds about 1 / cp
// of one device's activations (plus the gathered keys and values while a
// block attends). On every backend, each against its own one device (on
// cuda the attention's context-parallel form is the unfused path); the
// simulator's activation peaks equal the cpu backend's to the byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <exception>
#include <string>

#include "conformance_support.h"
#include "core/schedule/op.h"
#include "core/sim/experiment_prediction.h"

namespace pipelab {
namespace {

using testing::expect_same_curve;
using testing::losses_of;
using testing::run_experiment;
using testing::with_plan;

constexpr double kContextTolerance = 1e-5;

Experiment with_cp(Experiment experiment, int cp) {
  experiment.parallel.cp = cp;
  return experiment;
}

void expect_trains_as(const std::vector<double>& reference, const Experiment& experiment,
                      const std::string& what) {
  const testing::RunOutput run = run_experiment(experiment);
  ASSERT_EQ(run.state, RunState::Finished) << what << ": " << run.error;
  expect_same_curve(reference, run.losses(), kContextTolerance, what);
}

class ContextParallelTraining : public testing::BackendConformance {
 protected:
  // The tiny GPT (sequences of 8 tokens) on the backend under test.
  Experiment tiny_gpt_experiment() const {
    return testing::on_backend(testing::tiny_gpt_experiment(), backend());
  }
};

PIPELAB_CONFORMANCE_SUITE(ContextParallelTraining);

TEST_P(ContextParallelTraining, RanksTrainAsOneDevice) {
  const Experiment one = tiny_gpt_experiment();  // sequences of 8 tokens
  const std::vector<double> reference = losses_of(one, "one device");
  ASSERT_EQ(reference.size(), 20u);
  expect_trains_as(reference, with_cp(one, 2), "cp 2");
  expect_trains_as(reference, with_cp(one, 4), "cp 4 (one token per chunk)");
  expect_trains_as(reference, with_cp(with_plan(one, ScheduleKind::OneFOneB, 2, 4), 2),
                   "cp 2 x pp 2");
  expect_trains_as(reference, with_cp(with_plan(one, ScheduleKind::ZeroBubbleH1, 2, 4), 2),
                   "cp 2 x pp 2 zb-h1 (split backward)");
  expect_trains_as(reference, with_cp(with_plan(one, ScheduleKind::OneFOneB, 1, 2, 2), 2),
                   "cp 2 x dp 2");
  Experiment recomputed = with_cp(one, 2);
  recomputed.parallel.recompute = true;
  expect_trains_as(reference, recomputed, "cp 2, full recompute");
  recomputed.parallel.recompute = false;
  recomputed.parallel.selective_recompute = true;
  expect_trains_as(reference, recomputed, "cp 2, selective recompute");
}

// Dropout in the blocks (after the attention scores, Proj and FFN2) draws
// each value's mask by its global position, so the ranks drop what one
// device drops.
TEST_P(ContextParallelTraining, DropoutMasksFollowTheGlobalPositions) {
  Experiment one = tiny_gpt_experiment();
  for (LayerSpec& layer : one.model.layers)
    if (layer.type == LayerType::TransformerBlock) layer.dropout = 0.2;
  const std::vector<double> reference = losses_of(one, "one device");
  expect_trains_as(reference, with_cp(one, 2), "cp 2 with dropout");
  Experiment sequence = with_cp(with_plan(one, ScheduleKind::OneFOneB, 1, 2, 1, 2), 2);
  sequence.parallel.sequence_parallel = true;
  expect_trains_as(reference, sequence, "cp 2 x tp 2, sequence parallel, with dropout");
  Experiment selective = with_cp(one, 2);
  selective.parallel.selective_recompute = true;
  expect_trains_as(reference, selective, "cp 2 with dropout, selective recompute");
}

TEST_P(ContextParallelTraining, WithTensorAndSequenceParallelism) {
  const Experiment one = tiny_gpt_experiment();
  const std::vector<double> reference = losses_of(one, "one device");
  const Experiment split = with_cp(with_plan(one, ScheduleKind::OneFOneB, 1, 2, 1, 2), 2);
  expect_trains_as(reference, split, "cp 2 x tp 2");
  Experiment sequence = split;
  sequence.parallel.sequence_parallel = true;
  expect_trains_as(reference, sequence, "cp 2 x tp 2, sequence parallel");
}

TEST_P(ContextParallelTraining, WithEveryZeroStage) {
  Experiment one = tiny_gpt_experiment();
  one.training.optimizer.type = "adamw";
  one.training.optimizer.weight_decay = 0.01;
  const std::vector<double> reference = losses_of(one, "one device");
  for (int zero = 1; zero <= 3; ++zero) {
    Experiment plan = with_cp(with_plan(one, ScheduleKind::OneFOneB, 1, 2, 2), 2);
    plan.parallel.zero = zero;
    expect_trains_as(reference, plan, "cp 2 x dp 2 zero " + std::to_string(zero));
    plan.parallel.tp = 2;
    expect_trains_as(reference, plan, "cp 2 x tp 2 x dp 2 zero " + std::to_string(zero));
    // With one replica the context ranks alone share the state out.
    Experiment ranks_only = with_cp(one, 2);
    ranks_only.parallel.zero = zero;
    expect_trains_as(reference, ranks_only, "cp 2 x dp 1 zero " + std::to_string(zero));
  }
}

// LLaMA's attention: rotary positions turn each rank's q and k by their
// global positions before the gather; grouped-query heads share k and v.
TEST_P(ContextParallelTraining, RotaryAndGroupedQueryAttention) {
  Experiment one = tiny_gpt_experiment();
  one.model.layers.front().position = PositionEncoding::Rope;
  for (LayerSpec& layer : one.model.layers) {
    if (layer.type != LayerType::TransformerBlock) continue;
    layer.heads = 4;
    layer.kv_heads = 2;
    layer.norm = NormType::RmsNorm;
    layer.activation = BlockActivation::SwiGlu;
    layer.bias = false;
  }
  const std::vector<double> reference = losses_of(one, "one device");
  expect_trains_as(reference, with_cp(one, 2), "llama cp 2");
  expect_trains_as(reference, with_cp(with_plan(one, ScheduleKind::OneFOneB, 1, 2, 1, 2), 2),
                   "llama cp 2 x tp 2");
}

// Every context-parallel collective the schedule lists is reported by the
// block that ran it, with the bytes the schedule gives it; and a rank's activations are about
// those of one device over cp.
TEST_P(ContextParallelTraining, TheTraceShowsTheRingAndTheActivationsShrink) {
  Experiment one = tiny_gpt_experiment();
  one.training.steps = 2;
  one.model.input = {32};  // longer sequences, so activations dwarf the rest
  one.data.samples = 256;
  const testing::RunOutput whole = run_experiment(one);
  ASSERT_EQ(whole.state, RunState::Finished) << whole.error;
  const testing::RunOutput split = run_experiment(with_cp(one, 2));
  ASSERT_EQ(split.state, RunState::Finished) << split.error;

  int gathers = 0, scatters = 0;
  for (const TraceEvent& event : split.trace.events) {
    if (event.op.group != CommGroup::ContextParallel) continue;
    EXPECT_GE(event.op.layer, 1) << "a block's collective";
    // What moved is what the simulator prices: the whole K and V of the micro-batch.
    EXPECT_GT(event.bytes, 0) << op_label(event.op);
    EXPECT_EQ(event.bytes, event.op.bytes) << op_label(event.op);
    EXPECT_GE(event.t_end, event.t_begin);
    (event.op.kind == OpKind::AllGather ? gathers : scatters) += 1;
  }
  // Per step, micro-batch, block and rank: one gather in F, one gather and
  // one scatter in B (2 steps, 1 micro-batch, 2 blocks, 2 ranks).
  EXPECT_EQ(gathers, 2 * 1 * 2 * 2 * 2);
  EXPECT_EQ(scatters, 2 * 1 * 2 * 2);

  const auto peak_activations = [](const Trace& trace, int device) {
    int64_t most = 0;
    for (const MemorySample& sample : trace.memory)
      if (sample.device == device)
        most = std::max(most, sample.bytes[static_cast<int>(MemoryCategory::Activations)]);
    return most;
  };
  const int64_t one_device = peak_activations(whole.trace, 0);
  ASSERT_GT(one_device, 0);
  for (int device = 0; device < 2; ++device) {
    const int64_t rank = peak_activations(split.trace, device);
    EXPECT_LT(rank, 0.7 * static_cast<double>(one_device)) << "device " << device;
    EXPECT_GT(rank, 0.3 * static_cast<double>(one_device)) << "device " << device;
  }
}

// A sequence the 2 cp chunks do not divide is refused before the run starts.
TEST_P(ContextParallelTraining, AnUnevenSplitIsExplained) {
  try {
    run_experiment(with_cp(tiny_gpt_experiment(), 3));  // 8 tokens in 6 chunks
    FAIL() << "cp = 3 cannot split 8 tokens";
  } catch (const std::exception& error) {
    EXPECT_NE(std::string(error.what()).find("2 x cp"), std::string::npos) << error.what();
  }
}

// The simulator's activation peaks under context parallelism are the
// measured ones, to the byte, per device: the rank's share of the kept
// values, and in a block's backward the whole sequence's K and V gathered
// again with their gradients (transformer_block.cpp's context_gathered). The
// cpu backend's: the CUDA executor keeps other tensors (bf16 copies, the fused
// attention's lse), which its pre-flight counts apart.
TEST(ContextParallelPrediction, PredictedActivationPeaksAreTheMeasuredOnes) {
  const Experiment one = testing::tiny_gpt_experiment();
  Experiment sequence = with_cp(with_plan(one, ScheduleKind::OneFOneB, 1, 2, 1, 2), 2);
  sequence.parallel.sequence_parallel = true;
  Experiment selective = with_cp(with_plan(one, ScheduleKind::GPipe, 2, 4), 2);
  selective.parallel.selective_recompute = true;
  const std::pair<std::string, Experiment> cases[] = {
      {"cp 2", with_cp(one, 2)},
      {"cp 4 x pp 2 1f1b", with_cp(with_plan(one, ScheduleKind::OneFOneB, 2, 4), 4)},
      {"cp 2 x pp 2 zb-h1", with_cp(with_plan(one, ScheduleKind::ZeroBubbleH1, 2, 4), 2)},
      {"cp 2 x tp 2 sp", sequence},
      {"cp 2 x pp 2 gpipe, selective recompute", selective},
  };
  for (const auto& [what, base] : cases) {
    Experiment experiment = base;
    experiment.training.steps = 2;
    const testing::RunOutput run = run_experiment(experiment);
    ASSERT_EQ(run.state, RunState::Finished) << what << ": " << run.error;
    const Prediction prediction = predict_experiment(experiment);
    ASSERT_EQ(static_cast<int>(prediction.result.per_device.size()), experiment.parallel.devices());
    for (int d = 0; d < experiment.parallel.devices(); ++d) {
      int64_t measured = 0;
      for (const MemorySample& sample : run.trace.memory)
        if (sample.device == d)
          measured =
              std::max(measured, sample.bytes[static_cast<int>(MemoryCategory::Activations)]);
      EXPECT_EQ(measured, prediction.result.per_device[d]
                              .peak_bytes[static_cast<size_t>(MemoryCategory::Activations)])
          << what << " device " << d;
    }
  }
}

}  // namespace
}  // namespace pipelab
