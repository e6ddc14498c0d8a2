// LLaMA-style attention trains exactly like one device under every
// synchronous split: grouped-query (and multi-query) attention with rotary
// position embeddings, RMSNorm, SwiGLU and no biases. Tensor parallelism
// shards whole query groups (tp divides kv_heads), sequence parallelism
// gathers whole sequences before the rotation, pipelines and data
// parallelism carry the blocks as they carry GPT's. The loss curves agree
// with one device's within the backends' FP32 tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "conformance_support.h"

namespace pipelab {
namespace {

using testing::run_experiment;
using testing::tiny_gpt_experiment;
using testing::with_plan;

// tiny_gpt_experiment's GPT with LLaMA's attention: 4 heads of width 4
// sharing `kv_heads` key/value heads, rotary positions, RMSNorm, SwiGLU, no
// biases in the blocks.
Experiment tiny_llama(int64_t kv_heads) {
  Experiment experiment = tiny_gpt_experiment();
  experiment.name = "tiny llama test";
  experiment.model.layers.front().position = PositionEncoding::Rope;
  for (LayerSpec& layer : experiment.model.layers) {
    if (layer.type != LayerType::TransformerBlock) continue;
    layer.heads = 4;
    layer.kv_heads = kv_heads;
    layer.norm = NormType::RmsNorm;
    layer.activation = BlockActivation::SwiGlu;
    layer.bias = false;
    layer.ffn = 32;
  }
  return experiment;
}

class LlamaAttentionEquivalence
    : public testing::ReferenceCurveConformance<LlamaAttentionEquivalence> {
 public:
  static Experiment reference_experiment() { return tiny_llama(2); }
};
PIPELAB_CONFORMANCE_SUITE(LlamaAttentionEquivalence);

// It learns, and the rotation and the grouping change the model: neither
// curve is learned positions' with one key/value head per query head.
TEST_P(LlamaAttentionEquivalence, LearnsAndDiffersFromLearnedPositions) {
  ASSERT_EQ(reference().size(), 20u);
  EXPECT_LT(reference().back(), 0.9 * reference().front());
  Experiment learned = tiny_llama(2);
  learned.model.layers.front().position = PositionEncoding::Learned;
  const testing::RunOutput positions = run_experiment(learned);
  ASSERT_EQ(positions.state, RunState::Finished) << positions.error;
  EXPECT_GT(std::fabs(positions.losses().back() - reference().back()), 1e-4);
  const testing::RunOutput full = run_experiment(tiny_llama(4));
  ASSERT_EQ(full.state, RunState::Finished) << full.error;
  EXPECT_GT(std::fabs(full.losses().back() - reference().back()), 1e-4);
  // LLaMA 3's rotary base turns the pairs by other angles: it learns too, differently.
  Experiment llama3 = tiny_llama(2);
  llama3.model.layers.front().rope_theta = 500000;
  const testing::RunOutput based = run_experiment(llama3);
  ASSERT_EQ(based.state, RunState::Finished) << based.error;
  EXPECT_LT(based.losses().back(), 0.9 * based.losses().front());
  EXPECT_GT(std::fabs(based.losses().back() - reference().back()), 1e-4);
}

TEST_P(LlamaAttentionEquivalence, PipelinesAndDataParallelism) {
  check(with_plan(tiny_llama(2), ScheduleKind::OneFOneB, 2, 4), "1f1b pp2 m4");
  check(with_plan(tiny_llama(2), ScheduleKind::ZeroBubbleH1, 2, 4), "zb-h1 pp2 m4");
  check(with_plan(tiny_llama(2), ScheduleKind::OneFOneB, 2, 2, 2), "dp2 x pp2");
  Experiment sharded = with_plan(tiny_llama(2), ScheduleKind::OneFOneB, 1, 2, 2);
  sharded.parallel.zero = 1;
  check(sharded, "dp2 zero 1");
}

TEST_P(LlamaAttentionEquivalence, TensorParallelShardsWholeQueryGroups) {
  check(with_plan(tiny_llama(2), ScheduleKind::OneFOneB, 1, 2, 1, 2), "tp2 (one group each)");
  Experiment sequence = with_plan(tiny_llama(2), ScheduleKind::OneFOneB, 2, 4, 1, 2);
  sequence.parallel.sequence_parallel = true;
  check(sequence, "tp2 sp x pp2");
  Experiment selective = with_plan(tiny_llama(2), ScheduleKind::OneFOneB, 1, 2, 1, 2);
  selective.parallel.selective_recompute = true;
  check(selective, "tp2 selective recompute");
}

// Multi-query attention (one key/value head) on the CPU against itself split
// over a pipeline and data parallelism on the backend under test; tp cannot
// split it (one group).
TEST_P(LlamaAttentionEquivalence, MultiQueryAttention) {
  const testing::RunOutput single = run_experiment(tiny_llama(1));
  ASSERT_EQ(single.state, RunState::Finished) << single.error;
  EXPECT_LT(single.losses().back(), 0.9 * single.losses().front());
  const testing::RunOutput split = run_experiment(
      testing::on_backend(with_plan(tiny_llama(1), ScheduleKind::OneFOneB, 2, 2, 2), backend()));
  ASSERT_EQ(split.state, RunState::Finished) << split.error;
  testing::expect_same_curve(single.losses(), split.losses(), testing::kBackendLossTolerance,
                             "mqa dp2 x pp2");
}

}  // namespace
}  // namespace pipelab
