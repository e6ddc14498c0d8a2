#include "core/planner/launch_export.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/io/experiment_io.h"
#include "planner_test_support.h"

namespace pipelab {
namespace {

Experiment llama_70b() {
  return load_experiment(std::string(PIPELAB_SOURCE_DIR) + "/examples/llama_70b_predict.json");
}

bool has_line(const LaunchExport& exported, const std::string& line) {
  return std::find(exported.lines.begin(), exported.lines.end(), line) != exported.lines.end();
}

bool mentions(const std::vector<std::string>& unmapped, const std::string& text) {
  return std::any_of(unmapped.begin(), unmapped.end(),
                     [&](const std::string& line) { return line.find(text) != std::string::npos; });
}

TEST(LaunchExport, MegatronFlagsOfTheLlama70bExample) {
  const LaunchExport flags = export_launch(llama_70b(), LaunchTool::Megatron);
  for (const char* line : {"--tensor-model-parallel-size 8",
                           "--pipeline-model-parallel-size 8",
                           "--num-layers-per-virtual-pipeline-stage 5",
                           "--sequence-parallel",
                           "--recompute-granularity selective",
                           "--micro-batch-size 1",
                           "--global-batch-size 32",
                           "--num-layers 80",
                           "--hidden-size 8192",
                           "--ffn-hidden-size 28672",
                           "--num-attention-heads 64",
                           "--group-query-attention",
                           "--num-query-groups 8",
                           "--seq-length 4096",
                           "--position-embedding-type rope",
                           "--rotary-base 10000",
                           "--normalization RMSNorm",
                           "--swiglu",
                           "--disable-bias-linear",
                           "--vocab-size 32000",
                           "--bf16"})
    EXPECT_TRUE(has_line(flags, line)) << line;
  EXPECT_FALSE(has_line(flags, "--use-distributed-optimizer"));  // zero 0
  // Gradients in the run's precision (the example's default), or in float32.
  EXPECT_TRUE(has_line(flags, "--grad-reduce-in-bf16"));
  Experiment fp32_gradients = llama_70b();
  fp32_gradients.training.fp32_gradients = true;
  EXPECT_TRUE(has_line(export_launch(fp32_gradients, LaunchTool::Megatron),
                       "--accumulate-allreduce-grads-in-fp32"));
  EXPECT_TRUE(has_line(export_launch(fp32_gradients, LaunchTool::Torchtitan),
                       "mixed_precision_reduce = \"float32\""));
  EXPECT_TRUE(has_line(export_launch(llama_70b(), LaunchTool::Torchtitan),
                       "mixed_precision_reduce = \"bfloat16\""));
  EXPECT_FALSE(has_line(flags, "--context-parallel-size 1"));
  EXPECT_TRUE(mentions(flags.unmapped, "parallel.partition = balanced")) << flags.unmapped.size();
  const std::string text = launch_text(flags, LaunchTool::Megatron);
  EXPECT_NE(text.find("--tensor-model-parallel-size 8 \\\n--pipeline-model-parallel-size 8"),
            std::string::npos);
  EXPECT_NE(text.find("# not exported: parallel.partition"), std::string::npos);
}

TEST(LaunchExport, ShardingRecomputeAndSchedulesMapOrAreListed) {
  Experiment experiment = llama_70b();
  ParallelPlan& plan = experiment.parallel;
  plan.zero = 1;
  plan.pp = 1;
  plan.chunks = 1;
  plan.schedule = ScheduleKind::OneFOneB;
  plan.recompute = true;
  plan.recompute_blocks = true;  // each block's input kept: Megatron-LM's one layer per chunk
  plan.cp = 2;
  plan.dp = 4;
  plan.microbatches = 2;
  ASSERT_TRUE(validate_experiment(experiment).empty()) << validate_experiment(experiment).front();
  LaunchExport megatron = export_launch(experiment, LaunchTool::Megatron);
  for (const char* line :
       {"--use-distributed-optimizer", "--context-parallel-size 2", "--recompute-granularity full",
        "--recompute-method uniform", "--recompute-num-layers 1", "--micro-batch-size 4",
        "--overlap-grad-reduce"})
    EXPECT_TRUE(has_line(megatron, line)) << line;
  LaunchExport titan = export_launch(experiment, LaunchTool::Torchtitan);
  EXPECT_TRUE(has_line(titan, "data_parallel_shard_degree = 4"));
  EXPECT_TRUE(has_line(titan, "context_parallel_degree = 2"));
  EXPECT_TRUE(has_line(titan, "mode = \"full\""));
  EXPECT_TRUE(has_line(titan, "local_batch_size = 8"));
  EXPECT_TRUE(mentions(titan.unmapped, "parallel.zero = 1"));
  EXPECT_FALSE(mentions(titan.unmapped, "parallel.recompute"));
  // Blocks rebuilt two at a time: Megatron-LM's --recompute-num-layers 2;
  // torchtitan checkpoints every block, so it is listed.
  plan.recompute_layers = 2;
  EXPECT_TRUE(
      has_line(export_launch(experiment, LaunchTool::Megatron), "--recompute-num-layers 2"));
  EXPECT_TRUE(mentions(export_launch(experiment, LaunchTool::Torchtitan).unmapped,
                       "parallel.recompute_layers = 2"));
  plan.recompute_layers = 1;
  // The stage as the unit: each stage's blocks one chunk (80 blocks, one
  // stage); torchtitan has no such unit, so it is listed.
  plan.recompute_blocks = false;
  megatron = export_launch(experiment, LaunchTool::Megatron);
  EXPECT_TRUE(has_line(megatron, "--recompute-num-layers 80"));
  titan = export_launch(experiment, LaunchTool::Torchtitan);
  EXPECT_TRUE(mentions(titan.unmapped, "parallel.recompute = true"));
  plan.recompute_blocks = true;

  plan.zero = 3;
  megatron = export_launch(experiment, LaunchTool::Megatron);
  EXPECT_TRUE(has_line(megatron, "--use-megatron-fsdp"));
  EXPECT_TRUE(has_line(megatron, "--data-parallel-sharding-strategy optim_grads_params"));
  titan = export_launch(experiment, LaunchTool::Torchtitan);
  EXPECT_TRUE(has_line(titan, "fsdp_reshard_after_forward = \"always\""));
  EXPECT_FALSE(mentions(titan.unmapped, "parallel.zero"));
  // FSDP keeping the gathered weights for the backward: torchtitan's "never";
  // Megatron-FSDP has no switch, so it is listed.
  plan.reshard_after_forward = false;
  titan = export_launch(experiment, LaunchTool::Torchtitan);
  EXPECT_TRUE(has_line(titan, "fsdp_reshard_after_forward = \"never\""));
  megatron = export_launch(experiment, LaunchTool::Megatron);
  EXPECT_TRUE(mentions(megatron.unmapped, "parallel.reshard_after_forward = false"));
  plan.reshard_after_forward = true;

  Experiment zbv = llama_70b();
  zbv.parallel.schedule = ScheduleKind::ZeroBubbleV;
  zbv.parallel.chunks = 2;
  ASSERT_TRUE(validate_experiment(zbv).empty()) << validate_experiment(zbv).front();
  EXPECT_TRUE(
      mentions(export_launch(zbv, LaunchTool::Megatron).unmapped, "parallel.schedule = zb-v"));
  titan = export_launch(zbv, LaunchTool::Torchtitan);
  EXPECT_TRUE(has_line(titan, "pipeline_parallel_schedule = \"ZBVZeroBubble\""));
  EXPECT_FALSE(mentions(titan.unmapped, "parallel.schedule"));
}

TEST(LaunchExport, AModelThatIsNotAGptIsRefusedWithTheReason) {
  try {
    export_launch(test::uneven_mlp(), LaunchTool::Megatron);
    FAIL() << "an MLP has no Megatron-LM equivalent";
  } catch (const ExperimentError& error) {
    EXPECT_NE(std::string(error.what()).find("only a sequence model"), std::string::npos);
  }
  EXPECT_EQ(parse_launch_tool("torchtitan"), LaunchTool::Torchtitan);
  EXPECT_FALSE(parse_launch_tool("deepspeed"));
}

}  // namespace
}  // namespace pipelab
