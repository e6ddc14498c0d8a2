// What the executors refuse before a run starts, each with the field to change.
#include "core/runtime/trainable.h"

#include <gtest/gtest.h>

#include <string>

#include "core/io/experiment_io.h"
#include "runtime_test_support.h"

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
  Experiment cuda_sequence_parallel = cuda;
  cuda_sequence_parallel.parallel.tp = 2;
  cuda_sequence_parallel.parallel.sequence_parallel = true;
  EXPECT_NE(refusal(cuda_sequence_parallel).find("sequence parallelism trains on the cpu backend only"),
            std::string::npos);
  Experiment cuda_experts = cuda;
  cuda_experts.model.layers[2].experts = 4;
  EXPECT_EQ(refusal(cuda_experts),
            "model.layers[2] is a transformer_block with experts: Mixture-of-Experts layers train "
            "on the cpu "
            "backend only for now; set backend.type = cpu, or simulate this model");
  Experiment elsewhere = testing::tiny_gpt_experiment();
  elsewhere.backend.type = "tpu";
  EXPECT_NE(refusal(elsewhere).find("set backend.type = cpu or cuda"), std::string::npos);

  Experiment dropout = testing::tiny_gpt_experiment();
  dropout.model.layers[2].dropout = 0.1;
  EXPECT_EQ(refusal(dropout), "");

  Experiment mse = testing::tiny_gpt_experiment();
  mse.model.loss = LossType::Mse;
  EXPECT_NE(refusal(mse).find("set model.loss = cross_entropy"), std::string::npos) << refusal(mse);

  Experiment bf16 = testing::tiny_gpt_experiment();
  bf16.training.precision = Precision::Bf16Mixed;
  EXPECT_NE(refusal(bf16).find("set training.precision = fp32"), std::string::npos);
}

TEST(Trainable, ConvolutionalNetworksTrainOnTheCpuAndCuda) {
  EXPECT_EQ(refusal(testing::small_conv_experiment(true)), "");
  EXPECT_EQ(refusal(testing::on_backend(testing::small_conv_experiment(true), "cuda")), "");
  const std::string elsewhere = refusal(testing::on_backend(testing::small_conv_experiment(false), "tpu"));
  EXPECT_NE(elsewhere.find("model.layers[0] is conv2d"), std::string::npos) << elsewhere;
  EXPECT_NE(elsewhere.find("set backend.type = cpu or cuda"), std::string::npos) << elsewhere;
}

TEST(Trainable, ABlockNeedsAnEmbeddingFirst) {
  Experiment experiment = testing::tiny_gpt_experiment();
  experiment.model.layers.erase(experiment.model.layers.begin());
  EXPECT_NE(refusal(experiment).find("make model.layers[0] an embedding"), std::string::npos);
}

}  // namespace
}  // namespace pipelab
