// Reading experiment files: the documented shape, defaults, and every error a
// user can make while typing one.
#include <gtest/gtest.h>

#include "tests/core/io/io_test_support.h"

namespace pipelab {
namespace {

using testing::parse_error;
using testing::small_experiment_json;

TEST(ExperimentParse, ReadsTheDocumentedFileShape) {
  const Experiment experiment = parse_experiment(R"({
    "name": "MNIST MLP on a 4-stage 1F1B pipeline", "seed": 1,
    "model": {"input": [784], "layers": [{"type": "linear", "out": 512}, {"type": "relu"},
              {"type": "linear", "out": 512}, {"type": "relu"}, {"type": "linear", "out": 10}],
              "loss": "cross_entropy"},
    "data": {"source": "mnist", "path": "../shared/datasets/mnist-t10k", "validation_fraction": 0.2},
    "training": {"batch_size": 256, "steps": 200, "optimizer": {"type": "sgd", "lr": 0.05, "momentum": 0.9}},
    "parallel": {"dp": 1, "tp": 1, "pp": 4, "microbatches": 8, "schedule": "1f1b", "update": "sync",
                 "recompute": false, "partition": "balanced"},
    "backend": {"type": "cpu"}
  })");
  EXPECT_EQ(experiment.name, "MNIST MLP on a 4-stage 1F1B pipeline");
  EXPECT_EQ(experiment.model.input, std::vector<int64_t>{784});
  ASSERT_EQ(experiment.model.layers.size(), 5u);
  EXPECT_EQ(experiment.model.layers[2].type, LayerType::Linear);
  EXPECT_EQ(experiment.model.layers[2].out, 512);
  EXPECT_EQ(experiment.model.layers[3].type, LayerType::Relu);
  EXPECT_EQ(experiment.data.source, "mnist");
  EXPECT_EQ(experiment.data.path, "../shared/datasets/mnist-t10k");
  EXPECT_TRUE(std::filesystem::path(experiment.data.resolved_path).is_absolute());
  EXPECT_EQ(experiment.training.batch_size, 256);
  EXPECT_DOUBLE_EQ(experiment.training.optimizer.momentum, 0.9);
  EXPECT_EQ(experiment.parallel.pp, 4);
  EXPECT_EQ(experiment.parallel.microbatches, 8);
  EXPECT_EQ(experiment.parallel.schedule, ScheduleKind::OneFOneB);
  EXPECT_EQ(microbatch_size(experiment), 256 / 1 / 8);
}

TEST(ExperimentParse, OnlyTheLayersAreRequired) {
  const Experiment experiment = parse_experiment(R"({"model": {"layers": [{"type": "linear", "out": 3}]}})");
  const Experiment defaults;
  EXPECT_EQ(experiment.name, defaults.name);
  EXPECT_EQ(experiment.data.source, "spiral");
  // The input width comes from the data source when the file leaves it out.
  EXPECT_EQ(experiment.model.input, std::vector<int64_t>{2});
  EXPECT_EQ(experiment.parallel.pp, 1);
  EXPECT_EQ(experiment.training.steps, defaults.training.steps);

  EXPECT_MENTIONS(parse_error("{}"), "model is missing");
  EXPECT_MENTIONS(parse_error(R"({"model": {"input": [2]}})"), "model.layers is missing");
}

TEST(ExperimentParse, PartitionIsARuleOrTheStageStarts) {
  auto document = small_experiment_json();
  document["parallel"]["partition"] = "uniform";
  EXPECT_EQ(parse_experiment(document.dump()).parallel.partition, PartitionRule::Uniform);

  document["parallel"]["partition"] = {3};
  const Experiment explicit_split = parse_experiment(document.dump());
  EXPECT_EQ(explicit_split.parallel.partition, PartitionRule::Explicit);
  EXPECT_EQ(explicit_split.parallel.boundaries, std::vector<int>{3});

  document["parallel"]["partition"] = {1, 2};
  EXPECT_MENTIONS(parse_error(document.dump()), "parallel.partition = [1, 2] lists 2 stage starts");
  document["parallel"]["partition"] = 3;
  EXPECT_MENTIONS(parse_error(document.dump()), "parallel.partition must be a rule");
}

TEST(ExperimentParse, CommentsAreAllowed) {
  const std::string text = "// my experiment\n" + small_experiment_json().dump();
  EXPECT_EQ(parse_error(text), "");
}

TEST(ExperimentParseErrors, NotJsonNamesTheLine) {
  const std::string message = parse_error("{\n  \"name\": \"x\",\n  oops\n}");
  EXPECT_EQ(message.rfind("not valid JSON: ", 0), 0u) << message;
  EXPECT_MENTIONS(message, "line 3");
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
  EXPECT_MENTIONS(parse_error("[1, 2]"), "must be a JSON object");
}

TEST(ExperimentParseErrors, DeepNestingIsRefusedNotACrash) {
  // Printing a value this deep for the message used to overflow the stack.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_MENTIONS(parse_error(deep), "nested more than 64 levels deep");
  EXPECT_MENTIONS(parse_error("{\"name\": " + deep + "}"), "nested more than 64 levels deep");
  Experiment experiment = default_experiment();
  EXPECT_THROW(apply_override(experiment, "name=" + deep), ExperimentError);
}

TEST(ExperimentParseErrors, UnknownKeysListTheValidOnes) {
  auto document = small_experiment_json();
  document["parallel"]["schedul"] = "gpipe";
  const std::string message = parse_error(document.dump());
  EXPECT_MENTIONS(message, "unknown key 'parallel.schedul'");
  EXPECT_MENTIONS(message, "did you mean 'schedule'");
  EXPECT_MENTIONS(message, "valid keys here: dp, tp, pp, microbatches");

  document = small_experiment_json();
  document["trainig"] = nlohmann::json::object();
  EXPECT_MENTIONS(parse_error(document.dump()), "unknown key 'trainig' (did you mean 'training'?)");

  // A key that is valid for another layer type is still unknown here.
  document = small_experiment_json();
  document["model"]["layers"][1]["out"] = 4;
  EXPECT_MENTIONS(parse_error(document.dump()), "unknown key 'model.layers[1].out'");
}

TEST(ExperimentParseErrors, WrongTypesShowTheValue) {
  auto document = small_experiment_json();
  document["parallel"]["pp"] = "four";
  EXPECT_MENTIONS(parse_error(document.dump()), "parallel.pp must be an integer, got \"four\"");
  document["parallel"]["pp"] = 2.5;
  EXPECT_MENTIONS(parse_error(document.dump()), "parallel.pp must be an integer, got 2.5");
  document["parallel"]["pp"] = 2.0;  // an integral float is an integer
  EXPECT_EQ(parse_error(document.dump()), "");

  document = small_experiment_json();
  document["parallel"]["recompute"] = "yes";
  EXPECT_MENTIONS(parse_error(document.dump()), "parallel.recompute must be false, true");
  document = small_experiment_json();
  document["training"]["optimizer"]["lr"] = "fast";
  EXPECT_MENTIONS(parse_error(document.dump()), "training.optimizer.lr must be a number");
  document = small_experiment_json();
  document["model"]["input"] = 2;
  EXPECT_MENTIONS(parse_error(document.dump()), "model.input must be an array of integers");
  document = small_experiment_json();
  document["seed"] = -1;
  EXPECT_MENTIONS(parse_error(document.dump()), "seed must be >= 0");
  document = small_experiment_json();
  document["parallel"] = 4;
  EXPECT_MENTIONS(parse_error(document.dump()), "parallel must be a JSON object");
}

TEST(ExperimentParseErrors, UnknownNamesListTheValidOnes) {
  auto document = small_experiment_json();
  document["parallel"]["schedule"] = "zb";
  EXPECT_MENTIONS(parse_error(document.dump()),
                  "parallel.schedule = 'zb' is not a schedule; valid: gpipe, 1f1b, interleaved-1f1b, zb-h1, "
                  "zb-v, dualpipev, pipedream, pipedream-2bw, pipemare");
  document["parallel"]["schedule"] = "gpipe";
  document["parallel"]["update"] = "lazy";
  EXPECT_MENTIONS(parse_error(document.dump()), "parallel.update = 'lazy' is not an update mode; valid: sync, async");
  document["parallel"]["update"] = "sync";
  document["parallel"]["offload"] = "weights";
  EXPECT_MENTIONS(parse_error(document.dump()),
                  "parallel.offload = 'weights' is not an offload mode; valid: none, activations");

  document = small_experiment_json();
  document["model"]["layers"][0]["type"] = "conv";
  EXPECT_MENTIONS(parse_error(document.dump()), "model.layers[0].type = 'conv' is not a layer type; valid: linear");
  document["model"]["layers"][0] = {{"out", 3}};
  EXPECT_MENTIONS(parse_error(document.dump()), "model.layers[0] needs a \"type\"");

  document = small_experiment_json();
  document["model"]["loss"] = "hinge";
  EXPECT_MENTIONS(parse_error(document.dump()), "model.loss = 'hinge' is not a loss; valid: cross_entropy, mse");

  document = small_experiment_json();
  document["data"]["source"] = "mnst";
  document["data"]["path"] = "x";
  document["model"]["input"] = {784};
  const std::string message = parse_error(document.dump());
  EXPECT_MENTIONS(message, "data.source = 'mnst' is not a data source; valid: mnist, fashion-mnist, idx, csv");
  EXPECT_MENTIONS(message, "did you mean 'mnist'");

  document = small_experiment_json();
  document["backend"] = {{"type", "gpu"}};
  EXPECT_MENTIONS(parse_error(document.dump()), "backend.type = 'gpu' is not a backend; valid: cpu, cuda");
  document = small_experiment_json();
  document["training"]["optimizer"]["type"] = "rmsprop";
  EXPECT_MENTIONS(parse_error(document.dump()),
                  "training.optimizer.type = 'rmsprop' is not an optimizer; valid: sgd, adam, adamw");
  document = small_experiment_json();
  document["simulation"] = {{"profile", "tpu"}};
  EXPECT_MENTIONS(parse_error(document.dump()), "simulation.profile = 'tpu' is not a device profile");
}

TEST(ExperimentParseErrors, MissingFileSaysSoWithThePath) {
  try {
    load_experiment("no/such/folder/experiment.json");
    FAIL() << "expected an error";
  } catch (const ExperimentError& error) {
    EXPECT_MENTIONS(error.what(), "not found");
    EXPECT_MENTIONS(error.what(), "no/such/folder/experiment.json");
  }
}

}  // namespace
}  // namespace pipelab
