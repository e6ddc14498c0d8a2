// validate_experiment: cross-field problems, each naming the fields involved.
#include <gtest/gtest.h>

#include "tests/core/io/io_test_support.h"

namespace pipelab {
namespace {

using testing::parse_error;
using testing::small_experiment_json;

// The small experiment with one field changed, as parse_experiment reports it.
std::string error_with(const std::string& section, const std::string& key, const nlohmann::json& value) {
  auto document = small_experiment_json();
  document[section][key] = value;
  return parse_error(document.dump());
}

TEST(ExperimentValidation, TheSmallExperimentIsValid) {
  EXPECT_EQ(parse_error(small_experiment_json().dump()), "");
  EXPECT_TRUE(validate_experiment(default_experiment()).empty());
}

TEST(ExperimentValidation, MicrobatchesMustDivideTheReplicaBatch) {
  auto document = small_experiment_json();
  document["training"]["batch_size"] = 256;
  document["parallel"]["microbatches"] = 12;
  const std::string message = parse_error(document.dump());
  EXPECT_MENTIONS(message,
                  "parallel.microbatches = 12 does not divide the per-replica batch training.batch_size / "
                  "parallel.dp = 256");
  EXPECT_MENTIONS(message, "use e.g. 8");

  document["parallel"]["dp"] = 2;
  document["parallel"]["microbatches"] = 3;
  EXPECT_MENTIONS(parse_error(document.dump()), "training.batch_size / parallel.dp = 256 / 2 = 128");

  document["parallel"]["dp"] = 3;
  EXPECT_MENTIONS(parse_error(document.dump()), "training.batch_size = 256 is not divisible by parallel.dp = 3");
}

TEST(ExperimentValidation, TheSplitMustFitTheModel) {
  EXPECT_MENTIONS(error_with("parallel", "pp", 8), "pp = 8 but the model has 5 splittable layers");
  EXPECT_MENTIONS(error_with("parallel", "tp", 3), "tp = 3 does not divide linear layer 0's width 16");
  EXPECT_EQ(error_with("parallel", "tp", 4), "");
}

// validate_parallel_fields is validate_parallel less the split's profile,
// its last check (the split search profiles each split once itself).
TEST(ExperimentValidation, TheFieldChecksLeaveOutOnlyTheSplitsProfile) {
  Experiment experiment = default_experiment();
  experiment.parallel.pp = 64;  // more stages than layers: the profile's problem only
  ASSERT_FALSE(validate_parallel(experiment).empty());
  EXPECT_TRUE(validate_parallel_fields(experiment).empty());
  experiment.parallel.microbatches = 1000;  // a field's problem comes first in both
  ASSERT_FALSE(validate_parallel_fields(experiment).empty());
  EXPECT_EQ(validate_parallel_fields(experiment).front(), validate_parallel(experiment).front());
}

TEST(ExperimentValidation, ExpertParallelNeedsExpertsItCanShareOut) {
  auto document = small_experiment_json();
  document["model"]["layers"][2] = {{"type", "moe"}, {"experts", 4}, {"top_k", 2}};
  document["parallel"]["dp"] = 4;
  document["parallel"]["ep"] = 2;
  EXPECT_EQ(parse_error(document.dump()), "");
  document["parallel"]["ep"] = 3;
  EXPECT_MENTIONS(parse_error(document.dump()), "parallel.ep = 3 does not divide parallel.dp = 4");
  document["parallel"]["dp"] = 8;
  document["parallel"]["ep"] = 8;
  EXPECT_MENTIONS(parse_error(document.dump()),
                  "model.layers[2] has 4 experts, which parallel.ep = 8 cannot share out evenly");
  document["parallel"]["ep"] = 0;
  EXPECT_MENTIONS(parse_error(document.dump()), "parallel.ep");
  document["parallel"]["ep"] = 2;
  document["model"]["layers"][2]["top_k"] = 5;
  EXPECT_MENTIONS(parse_error(document.dump()), "moe top_k = 5 must be in [1, experts = 4]");
  document["model"]["layers"][2]["top_k"] = 1;
  document["parallel"]["update"] = "async";
  EXPECT_MENTIONS(parse_error(document.dump()), "set parallel.update = sync or ep = 1");
  EXPECT_MENTIONS(error_with("parallel", "ep", 1), "");
  auto no_experts = small_experiment_json();
  no_experts["parallel"]["dp"] = 2;
  no_experts["parallel"]["ep"] = 2;
  EXPECT_MENTIONS(parse_error(no_experts.dump()), "this model has none; set ep = 1 or add a moe layer");
}

TEST(ExperimentValidation, ZbVNeedsTwoChunks) {
  auto document = small_experiment_json();  // pp = 2: zb-v has 4 stages
  document["parallel"]["schedule"] = "zb-v";
  EXPECT_MENTIONS(parse_error(document.dump()), "parallel.schedule = zb-v needs parallel.chunks = 2");
  document["parallel"]["chunks"] = 3;
  EXPECT_MENTIONS(parse_error(document.dump()), "parallel.schedule = zb-v needs parallel.chunks = 2");
  document["parallel"]["chunks"] = 2;
  EXPECT_EQ(parse_error(document.dump()), "");
}

TEST(ExperimentValidation, DualPipeVNeedsTwoChunksAndAtLeastTwoMicrobatchesPerDevice) {
  auto document = small_experiment_json();  // pp = 2: dualpipev has 4 stages
  document["parallel"]["schedule"] = "dualpipev";
  EXPECT_MENTIONS(parse_error(document.dump()), "parallel.schedule = dualpipev needs parallel.chunks = 2");
  document["parallel"]["chunks"] = 2;
  EXPECT_EQ(parse_error(document.dump()), "");  // m = 4 = 2 pp
  document["parallel"]["microbatches"] = 3;
  EXPECT_MENTIONS(parse_error(document.dump()),
                  "parallel.microbatches: dualpipev needs microbatches (3) >= its stage count 2 * pp = 4 "
                  "(as PyTorch's ScheduleDualPipeV); try microbatches = 4");
}

// The validator accepts dualpipev wherever torch does: m >= 2 pp, chunks = 2.
TEST(ExperimentValidation, DualPipeVAcceptsEveryMicrobatchCountFromTwicePp) {
  for (int pp : {1, 2})
    for (int m : {2 * pp, 2 * pp + 1, 3 * pp, 8}) {
      auto document = small_experiment_json();
      document["parallel"]["schedule"] = "dualpipev";
      document["parallel"]["chunks"] = 2;
      document["parallel"]["pp"] = pp;
      document["parallel"]["microbatches"] = m;
      document["training"]["batch_size"] = 8 * 3 * 5 * 7;
      EXPECT_EQ(parse_error(document.dump()), "") << "pp " << pp << " m " << m;
    }
}

TEST(ExperimentValidation, ScheduleRules) {
  auto document = small_experiment_json();
  document["parallel"]["schedule"] = "interleaved-1f1b";
  document["parallel"]["chunks"] = 2;
  document["parallel"]["microbatches"] = 5;  // pp = 2: 2 rounds, 5 % 2 != 0
  EXPECT_MENTIONS(parse_error(document.dump()),
                  "parallel.microbatches: interleaved-1f1b needs microbatches (5) to be a multiple of "
                  "its round count");
  document["parallel"]["microbatches"] = 4;
  EXPECT_EQ(parse_error(document.dump()), "");
  document["parallel"]["chunks"] = 1;
  EXPECT_MENTIONS(parse_error(document.dump()), "interleaved-1f1b needs parallel.chunks >= 2");
  document["parallel"]["chunks"] = 4;  // 2 x 4 = 8 stages for 5 layers
  EXPECT_MENTIONS(parse_error(document.dump()), "pp x chunks = 8");

  EXPECT_MENTIONS(error_with("parallel", "chunks", 2), "parallel.chunks = 2 needs parallel.schedule = interleaved-1f1b");

  document = small_experiment_json();
  document["parallel"]["schedule"] = "pipedream";
  document["parallel"]["update"] = "async";
  const std::string message = parse_error(document.dump());
  EXPECT_MENTIONS(message, "parallel.update = async with parallel.schedule = pipedream is contradictory");
  EXPECT_MENTIONS(message, "parameter server");
  document["parallel"]["update"] = "sync";
  EXPECT_EQ(parse_error(document.dump()), "");
}

TEST(ExperimentValidation, PipeMareFields) {
  auto document = small_experiment_json();
  document["parallel"]["schedule"] = "pipemare";
  document["training"]["pipemare"] = {{"lr_rescheduling", true}, {"lr_warmup_updates", 50},
                                      {"discrepancy_correction", false}, {"velocity_decay", 0.5}};
  EXPECT_EQ(parse_error(document.dump()), "");
  const Experiment experiment = parse_experiment(document.dump());
  EXPECT_EQ(experiment.parallel.schedule, ScheduleKind::PipeMare);
  EXPECT_TRUE(experiment.training.pipemare.lr_rescheduling);
  EXPECT_EQ(experiment.training.pipemare.lr_warmup_updates, 50);
  EXPECT_FALSE(experiment.training.pipemare.discrepancy_correction);
  EXPECT_EQ(experiment.training.pipemare.velocity_decay, 0.5);

  document["training"]["pipemare"]["lr_warmup_updates"] = 0;
  EXPECT_MENTIONS(parse_error(document.dump()), "training.pipemare.lr_warmup_updates = 0 must be >= 1");
  document["training"]["pipemare"]["lr_warmup_updates"] = 50;
  document["training"]["pipemare"]["velocity_decay"] = 1.0;
  EXPECT_MENTIONS(parse_error(document.dump()), "training.pipemare.velocity_decay = 1 must be in [0, 1)");
  document["training"]["pipemare"]["velocity_decay"] = 0.5;
  document["training"]["pipemare"]["correction"] = true;
  EXPECT_MENTIONS(parse_error(document.dump()), "training.pipemare");
  EXPECT_MENTIONS(parse_error(document.dump()), "discrepancy_correction");  // the valid keys are listed
  document["training"]["pipemare"].erase("correction");
  document["training"]["pipemare"]["lr_rescheduling"] = "yes";
  EXPECT_MENTIONS(parse_error(document.dump()), "training.pipemare.lr_rescheduling");
}

TEST(ExperimentValidation, ValueRanges) {
  auto document = small_experiment_json();
  document["training"]["optimizer"]["lr"] = 0;
  EXPECT_MENTIONS(parse_error(document.dump()), "training.optimizer.lr = 0 must be > 0");
  document["training"]["optimizer"]["lr"] = 0.1;
  document["training"]["optimizer"]["momentum"] = 1.0;
  EXPECT_MENTIONS(parse_error(document.dump()), "training.optimizer.momentum");

  EXPECT_MENTIONS(error_with("training", "steps", 0), "training.steps must be >= 1, got 0");
  EXPECT_MENTIONS(error_with("training", "batch_size", 0), "training.batch_size must be >= 1");
  EXPECT_MENTIONS(error_with("data", "validation_fraction", 1.0), "data.validation_fraction = 1 must be in [0, 1)");
  EXPECT_MENTIONS(error_with("data", "validation_fraction", -0.5), "data.validation_fraction");
  EXPECT_MENTIONS(error_with("data", "classes", 1), "data.classes must be >= 2");
  EXPECT_MENTIONS(error_with("parallel", "dp", 0), "parallel.dp must be >= 1, got 0");
  EXPECT_MENTIONS(error_with("parallel", "staleness", -1), "parallel.staleness must be >= 0");

  document = small_experiment_json();
  document["model"]["layers"][1] = {{"type", "dropout"}, {"p", 1.0}};
  EXPECT_MENTIONS(parse_error(document.dump()), "model.layers[1]: dropout needs p in [0, 1)");
  document["model"]["layers"][1] = {{"type", "dropout"}, {"p", 0.5}};
  EXPECT_EQ(parse_error(document.dump()), "");
  document["model"]["layers"][0]["out"] = 0;
  EXPECT_MENTIONS(parse_error(document.dump()), "model.layers[0]: linear needs out >= 1");

  document = small_experiment_json();
  document["simulation"] = {{"profile", "unit"}, {"unit", {{"f", -1}}}};
  EXPECT_MENTIONS(parse_error(document.dump()), "simulation.unit.f = -1 must be >= 0");
}

TEST(ExperimentValidation, TheModelMustFitTheData) {
  auto document = small_experiment_json();
  document["model"]["input"] = {3};
  EXPECT_MENTIONS(parse_error(document.dump()),
                  "model.input = [3] gives 3 features but data.source 'spiral' has 2");
  document = small_experiment_json();
  document["data"]["classes"] = 4;
  EXPECT_MENTIONS(parse_error(document.dump()), "the model outputs 3 values but data.source 'spiral' has 4 classes");

  document = small_experiment_json();
  document["data"] = {{"source", "mnist"}};
  document["model"]["input"] = {1, 28, 28};
  document["model"]["layers"][4]["out"] = 10;
  EXPECT_MENTIONS(parse_error(document.dump()), "data.path is empty");
  document["data"]["path"] = "anywhere";  // validation does not need the files
  EXPECT_EQ(parse_error(document.dump()), "");
}

TEST(ExperimentValidation, ReportsEveryProblem) {
  Experiment experiment = default_experiment();
  experiment.training.steps = 0;
  experiment.backend.type = "tpu";
  experiment.parallel.pp = 100;
  const auto problems = validate_experiment(experiment);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_MENTIONS(problems[0], "training.steps");
  EXPECT_MENTIONS(problems[1], "pp = 100");
  EXPECT_MENTIONS(problems[2], "backend.type");

  auto document = small_experiment_json();
  document["training"]["steps"] = 0;
  document["training"]["optimizer"]["lr"] = -1;
  const std::string message = parse_error(document.dump());
  EXPECT_MENTIONS(message, "(and 1 more problem)");
}

TEST(ExperimentValidation, MicrobatchSizeSplitsTheBatch) {
  Experiment experiment = default_experiment();
  experiment.training.batch_size = 96;
  experiment.parallel.dp = 2;
  experiment.parallel.microbatches = 3;
  EXPECT_EQ(microbatch_size(experiment), 16);
}

}  // namespace
}  // namespace pipelab

namespace pipelab {
namespace {

TEST(ExperimentValidation, ZeroIsAStageFromZeroToThreeOfASynchronousStep) {
  EXPECT_MENTIONS(testing::parse_error([] {
                    auto document = testing::small_experiment_json();
                    document["parallel"]["zero"] = 4;
                    return document.dump();
                  }()),
                  "parallel.zero");
  auto document = testing::small_experiment_json();
  document["parallel"]["dp"] = 2;
  document["parallel"]["pp"] = 1;
  document["parallel"]["zero"] = 3;
  EXPECT_EQ(testing::parse_error(document.dump()), "");
  document["parallel"]["zero"] = 1;
  document["parallel"]["update"] = "async";
  EXPECT_MENTIONS(testing::parse_error(document.dump()), "update = async updates each replica on its own");
  document["parallel"]["update"] = "sync";
  document["parallel"]["schedule"] = "pipedream";
  document["parallel"]["pp"] = 2;
  EXPECT_MENTIONS(testing::parse_error(document.dump()), "pipedream updates each replica on its own");
  document["parallel"]["schedule"] = "1f1b";
  EXPECT_EQ(testing::parse_error(document.dump()), "");  // zero 1 with a pipeline: Megatron-LM's
  document["parallel"]["zero"] = 2;
  EXPECT_MENTIONS(testing::parse_error(document.dump()), "use zero = 1 with a pipeline");
  // FSDP's reshard_after_forward: a boolean, and only where weights are gathered for use.
  document["parallel"]["pp"] = 1;
  document["parallel"]["zero"] = 3;
  document["parallel"]["reshard_after_forward"] = false;
  EXPECT_EQ(testing::parse_error(document.dump()), "");
  document["parallel"]["zero"] = 1;
  EXPECT_MENTIONS(testing::parse_error(document.dump()),
                  "set zero = 3, or remove reshard_after_forward");
  document["parallel"]["reshard_after_forward"] = "no";
  EXPECT_MENTIONS(testing::parse_error(document.dump()), "parallel.reshard_after_forward");
}

}  // namespace
}  // namespace pipelab
