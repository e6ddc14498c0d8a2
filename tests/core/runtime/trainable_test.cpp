// What the executors refuse before a run starts, each with the field to change.
#include "core/runtime/trainable.h"

#include <gtest/gtest.h>

#include <string>

#include "core/io/experiment_io.h"
#include "tests/support/runtime_test_support.h"

namespace pipelab {
namespace {

std::string refusal(const Experiment& experiment) {
  try {
    check_trainable(experiment);
  } catch (const ExperimentError& error) {
    return error.what();
  }
  return "";
}

// Recomputation with each block as its unit trains on the cpu backend; the
// cuda executor rebuilds whole stages, and the refusal says so.
TEST(Trainable, RecomputationWithBlockUnitsTrainsOnTheCpu) {
  Experiment experiment = testing::tiny_gpt_experiment();
  experiment.parallel.recompute = true;
  EXPECT_EQ(refusal(experiment), "");
  experiment.parallel.recompute_blocks = true;
  EXPECT_EQ(refusal(experiment), "");
  experiment.backend.type = "cuda";
  EXPECT_NE(refusal(experiment)
                .find("parallel.recompute = \"block\": the cuda executor rebuilds a whole stage's"),
            std::string::npos);
}

TEST(Trainable, TransformersTrainOnTheCpu) {
  EXPECT_EQ(refusal(testing::tiny_gpt_experiment()), "");

  Experiment tensor_parallel = testing::tiny_gpt_experiment();
  tensor_parallel.parallel.tp = 2;
  EXPECT_EQ(refusal(tensor_parallel), "");
  tensor_parallel.parallel.sequence_parallel = true;
  EXPECT_EQ(refusal(tensor_parallel), "");

  Experiment cuda = testing::tiny_gpt_experiment();
  cuda.backend.type = "cuda";
  EXPECT_EQ(refusal(cuda), "");  // gpu/layers has the Transformer's layers and loss
  Experiment cuda_sequence_parallel = cuda;  // gpu/layers/sequence_split.h
  cuda_sequence_parallel.parallel.tp = 2;
  cuda_sequence_parallel.parallel.sequence_parallel = true;
  EXPECT_EQ(refusal(cuda_sequence_parallel), "");
  Experiment cuda_experts = cuda;  // gpu/layers/transformer_block.h runs the experts
  cuda_experts.model.layers[2].experts = 4;
  EXPECT_EQ(refusal(cuda_experts), "");
  Experiment cuda_expert_parallel = cuda_experts;
  cuda_expert_parallel.parallel.dp = 2;
  cuda_expert_parallel.parallel.ep = 2;
  EXPECT_EQ(refusal(cuda_expert_parallel), "");
  Experiment split_experts = cuda_experts;  // each expert split over tp (moe_layer.h, gpu/layers/moe.h)
  split_experts.parallel.tp = 2;
  EXPECT_EQ(refusal(split_experts), "");
  split_experts.backend.type = "cpu";
  EXPECT_EQ(refusal(split_experts), "");
  Experiment elsewhere = testing::tiny_gpt_experiment();
  elsewhere.backend.type = "tpu";
  EXPECT_NE(refusal(elsewhere).find("set backend.type = cpu or cuda"), std::string::npos);

  Experiment dropout = testing::tiny_gpt_experiment();
  dropout.model.layers[2].dropout = 0.1;
  EXPECT_EQ(refusal(dropout), "");

  Experiment mse = testing::tiny_gpt_experiment();
  mse.model.loss = LossType::Mse;
  EXPECT_NE(refusal(mse).find("set model.loss = cross_entropy"), std::string::npos) << refusal(mse);
}

TEST(Trainable, Bf16MixedTrainsOnCudaOnly) {
  Experiment bf16 = testing::tiny_gpt_experiment();
  bf16.training.precision = Precision::Bf16Mixed;
  EXPECT_EQ(refusal(bf16),
            "training.precision = bf16-mixed: the cpu executor trains in fp32 only (the simulator "
            "predicts bf16-mixed); set training.precision = fp32 to train, or backend.type = cuda");
  EXPECT_EQ(refusal(testing::on_backend(bf16, "cuda")), "");
  Experiment mlp = testing::on_backend(testing::small_experiment(), "cuda");
  mlp.training.precision = Precision::Bf16Mixed;
  EXPECT_EQ(refusal(mlp), "");

  Experiment conv = testing::on_backend(testing::small_conv_experiment(true), "cuda");
  conv.training.precision = Precision::Bf16Mixed;
  EXPECT_EQ(refusal(conv), "");  // conv2d and a residual block
  Experiment moe = testing::on_backend(testing::small_moe_experiment(1, 1.0), "cuda");
  moe.training.precision = Precision::Bf16Mixed;
  EXPECT_EQ(refusal(moe), "");
  Experiment expert_blocks = testing::on_backend(testing::gpt_with_expert_blocks(1, 1.0), "cuda");
  expert_blocks.training.precision = Precision::Bf16Mixed;
  EXPECT_EQ(refusal(expert_blocks), "");
}

TEST(Trainable, ConvolutionalNetworksTrainOnTheCpuAndCuda) {
  EXPECT_EQ(refusal(testing::small_conv_experiment(true)), "");
  EXPECT_EQ(refusal(testing::on_backend(testing::small_conv_experiment(true), "cuda")), "");
  const std::string elsewhere = refusal(testing::on_backend(testing::small_conv_experiment(false), "tpu"));
  EXPECT_NE(elsewhere.find("model.layers[0] is conv2d"), std::string::npos) << elsewhere;
  EXPECT_NE(elsewhere.find("set backend.type = cpu or cuda"), std::string::npos) << elsewhere;
}

TEST(Trainable, MoeLayersTrainOnTheCpuAndCudaWithOrWithoutExpertParallelism) {
  Experiment moe = testing::small_experiment();
  LayerSpec experts{LayerType::Moe, 0, true, 0.0};
  experts.experts = 4;
  experts.ffn = 8;
  moe.model.layers.insert(moe.model.layers.begin() + 1, experts);
  EXPECT_EQ(refusal(moe), "");
  EXPECT_EQ(refusal(testing::on_backend(moe, "cuda")), "");  // gpu/layers/moe.h
  const std::string elsewhere = refusal(testing::on_backend(moe, "tpu"));
  EXPECT_NE(elsewhere.find("model.layers[1] is moe"), std::string::npos) << elsewhere;
  EXPECT_NE(elsewhere.find("set backend.type = cpu or cuda"), std::string::npos) << elsewhere;

  Experiment expert_parallel = moe;
  expert_parallel.parallel.dp = 2;
  expert_parallel.parallel.ep = 2;
  EXPECT_EQ(refusal(expert_parallel), "");
  // gpu/layers/moe.h: the experts spread over the group, tokens by all-to-all.
  EXPECT_EQ(refusal(testing::on_backend(expert_parallel, "cuda")), "");
  const std::string not_trained = refusal(testing::on_backend(expert_parallel, "tpu"));
  EXPECT_NE(not_trained.find("model.layers[1] is moe"), std::string::npos) << not_trained;
  // Without moe layers ep has nothing to split, whatever the backend.
  Experiment no_experts = testing::on_backend(expert_parallel, "cuda");
  no_experts.model.layers.erase(no_experts.model.layers.begin() + 1);
  EXPECT_EQ(refusal(no_experts), "");
}

TEST(Trainable, ABlockNeedsAnEmbeddingFirst) {
  Experiment experiment = testing::tiny_gpt_experiment();
  experiment.model.layers.erase(experiment.model.layers.begin());
  EXPECT_NE(refusal(experiment).find("make model.layers[0] an embedding"), std::string::npos);
}

}  // namespace
}  // namespace pipelab

namespace pipelab {
namespace {

TEST(Trainable, EveryZeroStageTrains) {
  Experiment sharded = testing::tiny_gpt_experiment();
  sharded.parallel.dp = 2;
  for (int zero = 1; zero <= 3; ++zero) {
    sharded.parallel.zero = zero;
    EXPECT_EQ(refusal(sharded), "") << "zero " << zero;
  }
  // ZeRO-Offload trains.
  sharded.parallel.zero = 1;
  sharded.parallel.offload = OffloadMode::Optimizer;
  EXPECT_EQ(refusal(sharded), "");
  // So does zero 2 with sequence parallelism (the norms' partial gradients
  // are summed over the tensor-parallel group on each device's slice).
  sharded.parallel.offload = OffloadMode::None;
  sharded.parallel.zero = 2;
  sharded.parallel.tp = 2;
  sharded.parallel.sequence_parallel = true;
  EXPECT_EQ(refusal(sharded), "");
}

// Context parallelism trains dense Transformers on the cpu and cuda
// backends; the experts' routing does not split sequences yet.
TEST(Trainable, ContextParallelismTrainsDenseTransformers) {
  Experiment split = testing::tiny_gpt_experiment();
  split.parallel.cp = 2;
  EXPECT_EQ(refusal(split), "");
  Experiment cuda = split;
  cuda.backend.type = "cuda";
  EXPECT_EQ(refusal(cuda), "");
  Experiment experts = testing::gpt_with_expert_blocks(1, 2.0);
  experts.parallel.cp = 2;
  const std::string message = refusal(experts);
  EXPECT_NE(message.find("routes tokens to experts"), std::string::npos) << message;
}

}  // namespace
}  // namespace pipelab
