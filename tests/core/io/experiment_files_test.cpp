// Saving, reloading, overrides, data path resolution and the shipped examples.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/core/io/io_test_support.h"

namespace fs = std::filesystem;

namespace pipelab {
namespace {

using testing::TempFolder;

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// Changes the working directory for one scope, and changes it back.
class WorkingDirectory {
 public:
  explicit WorkingDirectory(const fs::path& path) : saved_(fs::current_path()) { fs::current_path(path); }
  ~WorkingDirectory() { fs::current_path(saved_); }
  WorkingDirectory(const WorkingDirectory&) = delete;
  WorkingDirectory& operator=(const WorkingDirectory&) = delete;

 private:
  fs::path saved_;
};

// Every field an experiment file carries (not file_path or resolved_path,
// which depend on where it is read from).
void expect_same_experiment(const Experiment& a, const Experiment& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.model.input, b.model.input);
  ASSERT_EQ(a.model.layers.size(), b.model.layers.size());
  for (size_t i = 0; i < a.model.layers.size(); ++i) {
    EXPECT_EQ(a.model.layers[i].type, b.model.layers[i].type) << "layer " << i;
    EXPECT_EQ(a.model.layers[i].out, b.model.layers[i].out) << "layer " << i;
    EXPECT_EQ(a.model.layers[i].bias, b.model.layers[i].bias) << "layer " << i;
    EXPECT_EQ(a.model.layers[i].p, b.model.layers[i].p) << "layer " << i;
    EXPECT_TRUE(a.model.layers[i] == b.model.layers[i]) << "layer " << i;  // every field, blocks' too
  }
  EXPECT_EQ(a.model.loss, b.model.loss);
  EXPECT_EQ(a.data.source, b.data.source);
  EXPECT_EQ(a.data.path, b.data.path);
  EXPECT_EQ(a.data.validation_fraction, b.data.validation_fraction);
  EXPECT_EQ(a.data.samples, b.data.samples);
  EXPECT_EQ(a.data.classes, b.data.classes);
  EXPECT_EQ(a.data.features, b.data.features);
  EXPECT_EQ(a.data.noise, b.data.noise);
  EXPECT_EQ(a.data.limit, b.data.limit);
  EXPECT_EQ(a.data.vocab, b.data.vocab);
  EXPECT_EQ(a.data.stride, b.data.stride);
  EXPECT_EQ(a.training.batch_size, b.training.batch_size);
  EXPECT_EQ(a.training.steps, b.training.steps);
  EXPECT_EQ(a.training.eval_every, b.training.eval_every);
  EXPECT_EQ(a.training.precision, b.training.precision);
  EXPECT_EQ(a.training.optimizer.type, b.training.optimizer.type);
  EXPECT_EQ(a.training.optimizer.lr, b.training.optimizer.lr);
  EXPECT_EQ(a.training.optimizer.momentum, b.training.optimizer.momentum);
  EXPECT_EQ(a.training.optimizer.beta1, b.training.optimizer.beta1);
  EXPECT_EQ(a.training.optimizer.beta2, b.training.optimizer.beta2);
  EXPECT_EQ(a.training.optimizer.eps, b.training.optimizer.eps);
  EXPECT_EQ(a.training.optimizer.weight_decay, b.training.optimizer.weight_decay);
  EXPECT_EQ(a.parallel.dp, b.parallel.dp);
  EXPECT_EQ(a.parallel.tp, b.parallel.tp);
  EXPECT_EQ(a.parallel.pp, b.parallel.pp);
  EXPECT_EQ(a.parallel.microbatches, b.parallel.microbatches);
  EXPECT_EQ(a.parallel.schedule, b.parallel.schedule);
  EXPECT_EQ(a.parallel.update, b.parallel.update);
  EXPECT_EQ(a.parallel.recompute, b.parallel.recompute);
  EXPECT_EQ(a.parallel.selective_recompute, b.parallel.selective_recompute);
  EXPECT_EQ(a.parallel.sequence_parallel, b.parallel.sequence_parallel);
  EXPECT_EQ(a.parallel.offload, b.parallel.offload);
  EXPECT_EQ(a.parallel.chunks, b.parallel.chunks);
  EXPECT_EQ(a.parallel.partition, b.parallel.partition);
  EXPECT_EQ(a.parallel.boundaries, b.parallel.boundaries);
  EXPECT_EQ(a.parallel.staleness, b.parallel.staleness);
  EXPECT_EQ(a.parallel.ep, b.parallel.ep);
  EXPECT_EQ(a.parallel.zero, b.parallel.zero);
  EXPECT_EQ(a.parallel.cp, b.parallel.cp);
  EXPECT_EQ(a.simulation.profile, b.simulation.profile);
  EXPECT_EQ(a.simulation.unit.f, b.simulation.unit.f);
  EXPECT_EQ(a.simulation.unit.b, b.simulation.unit.b);
  EXPECT_EQ(a.simulation.unit.w, b.simulation.unit.w);
  EXPECT_EQ(a.simulation.unit.comm, b.simulation.unit.comm);
  EXPECT_EQ(a.simulation.unit.u, b.simulation.unit.u);
  EXPECT_EQ(a.backend.type, b.backend.type);
  EXPECT_EQ(a.backend.threads, b.backend.threads);
  EXPECT_EQ(a.backend.tf32, b.backend.tf32);
}

// Every field away from its default, so a field the writer forgets shows up.
Experiment unusual_experiment() {
  Experiment experiment;
  experiment.name = "Round trip: \"quoted\", unicode \u00e9";
  experiment.seed = 9007199254740993ULL;  // not exact as a double
  experiment.model.input = {1, 4, 4};
  experiment.model.layers = {{LayerType::Linear, 32, false, 0.0}, {LayerType::Gelu, 0, true, 0.0},
                             {LayerType::LayerNorm, 0, true, 0.0}, {LayerType::Dropout, 0, true, 0.25},
                             {LayerType::Linear, 32, true, 0.0},   {LayerType::Tanh, 0, true, 0.0},
                             {LayerType::Sigmoid, 0, true, 0.0},   {LayerType::Relu, 0, true, 0.0},
                             {LayerType::Linear, 5, true, 0.0}};
  experiment.model.loss = LossType::Mse;
  experiment.data.source = "blobs";
  experiment.data.path = "some/where";
  experiment.data.validation_fraction = 0.1;
  experiment.data.samples = 999;
  experiment.data.classes = 5;
  experiment.data.features = 16;
  experiment.data.noise = 0.3;
  experiment.data.limit = 77;
  experiment.training.batch_size = 96;
  experiment.training.steps = 17;
  experiment.training.eval_every = 5;
  experiment.training.optimizer = {"adamw", 0.003, 0.5, 0.8, 0.99, 1e-7, 0.01};
  experiment.parallel.dp = 2;
  experiment.parallel.tp = 2;
  experiment.parallel.pp = 2;
  experiment.parallel.chunks = 2;
  experiment.parallel.microbatches = 4;
  experiment.parallel.schedule = ScheduleKind::Interleaved1F1B;
  experiment.parallel.recompute = true;
  experiment.parallel.partition = PartitionRule::Explicit;
  experiment.parallel.boundaries = {2, 4, 7};
  experiment.parallel.staleness = 5;
  experiment.simulation.profile = "unit";
  experiment.simulation.unit = {1.5, 2.5, 0.5, 0.25, 0.125};
  experiment.backend = {"cuda", 3, true};
  return experiment;
}

// unusual_experiment recomputes, which offloading excludes: offload on its own.
TEST(ExperimentFiles, OffloadRoundTrips) {
  Experiment original = default_experiment();
  original.parallel.offload = OffloadMode::Activations;
  const Experiment reread = parse_experiment(experiment_to_json(original));
  EXPECT_EQ(reread.parallel.offload, OffloadMode::Activations);
  EXPECT_EQ(parse_experiment(experiment_to_json(default_experiment())).parallel.offload, OffloadMode::None);
}

TEST(ExperimentFiles, ParseOfSaveGivesBackEveryField) {
  const Experiment original = unusual_experiment();
  ASSERT_TRUE(validate_experiment(original).empty()) << validate_experiment(original).front();
  const std::string text = experiment_to_json(original);
  const Experiment reread = parse_experiment(text);
  expect_same_experiment(original, reread);
  EXPECT_EQ(experiment_to_json(reread), text) << "saving is stable";

  // Every partition rule and schedule survives too.
  Experiment other = default_experiment();
  for (PartitionRule rule : {PartitionRule::Balanced, PartitionRule::Uniform, PartitionRule::Params}) {
    other.parallel.partition = rule;
    expect_same_experiment(other, parse_experiment(experiment_to_json(other)));
  }
  for (const std::string& name : schedule_names()) {
    other.parallel.schedule = *parse_schedule(name);
    other.parallel.chunks = other.parallel.schedule == ScheduleKind::Interleaved1F1B ? 2 : 1;
    expect_same_experiment(other, parse_experiment_unvalidated(experiment_to_json(other)));
  }
}

TEST(ExperimentFiles, SaveThenLoadKeepsTheExperiment) {
  TempFolder folder;
  const fs::path file = folder.path() / "nested" / "experiment.json";
  fs::create_directories(file.parent_path());
  const Experiment original = unusual_experiment();
  save_experiment(original, file.string());
  const Experiment loaded = load_experiment(file.string());
  expect_same_experiment(original, loaded);
  EXPECT_EQ(loaded.file_path, file.string());
  EXPECT_FALSE(fs::exists(file.string() + ".saving"));
  // The saved text starts with the name: keys keep their reading order.
  std::ifstream saved(file);
  std::string first_lines((std::istreambuf_iterator<char>(saved)), {});
  EXPECT_LT(first_lines.find("\"name\""), first_lines.find("\"model\""));
  EXPECT_LT(first_lines.find("\"model\""), first_lines.find("\"parallel\""));

  EXPECT_THROW(save_experiment(original, (folder.path() / "missing" / "x.json").string()), ExperimentError);
}

TEST(ExperimentFiles, ErrorsFromAFileNameTheFile) {
  TempFolder folder;
  const fs::path file = folder.path() / "broken.json";
  write_file(file, "{\"model\": {\"layers\": []}, \"parallel\": {\"pp\": \"two\"}}");
  try {
    load_experiment(file.string());
    FAIL() << "expected an error";
  } catch (const ExperimentError& error) {
    EXPECT_MENTIONS(error.what(), file.string() + ": ");
    EXPECT_MENTIONS(error.what(), "parallel.pp must be an integer");
  }
  // An invalid but well-formed file still opens for editing.
  write_file(file, "{\"model\": {\"layers\": [{\"type\": \"linear\", \"out\": 3}]}, \"training\": {\"steps\": 0}}");
  EXPECT_THROW(load_experiment(file.string()), ExperimentError);
  const Experiment opened = load_experiment_unvalidated(file.string());
  EXPECT_EQ(opened.training.steps, 0);
  EXPECT_FALSE(validate_experiment(opened).empty());
}

TEST(ExperimentOverrides, EditFieldsByPath) {
  Experiment experiment = default_experiment();  // 7 layers, pp 2
  apply_override(experiment, "parallel.pp=4");
  EXPECT_EQ(experiment.parallel.pp, 4);
  apply_override(experiment, "model.layers.0.out=256");
  EXPECT_EQ(experiment.model.layers[0].out, 256);
  apply_override(experiment, "model.layers[2].out=32");
  EXPECT_EQ(experiment.model.layers[2].out, 32);
  apply_override(experiment, "parallel.schedule=gpipe");
  EXPECT_EQ(experiment.parallel.schedule, ScheduleKind::GPipe);
  apply_override(experiment, "parallel.schedule=zb-h1");
  EXPECT_EQ(experiment.parallel.schedule, ScheduleKind::ZeroBubbleH1);
  apply_override(experiment, "parallel.schedule=1f1b");  // not a JSON number: taken as text
  EXPECT_EQ(experiment.parallel.schedule, ScheduleKind::OneFOneB);
  apply_override(experiment, "parallel.schedule=gpipe");
  apply_override(experiment, "training.optimizer.lr=0.1");
  EXPECT_DOUBLE_EQ(experiment.training.optimizer.lr, 0.1);
  apply_override(experiment, "name=My run");
  EXPECT_EQ(experiment.name, "My run");
  apply_override(experiment, "parallel.recompute=true");
  EXPECT_TRUE(experiment.parallel.recompute);
  apply_override(experiment, "parallel.partition=[1, 3, 5]");
  EXPECT_EQ(experiment.parallel.partition, PartitionRule::Explicit);
  EXPECT_EQ(experiment.parallel.boundaries, (std::vector<int>{1, 3, 5}));
  apply_override(experiment, R"(model.layers.1={"type": "gelu"})");
  EXPECT_EQ(experiment.model.layers[1].type, LayerType::Gelu);

  // Several at once are validated together at the end.
  apply_overrides(experiment, {"parallel.pp=2", "parallel.partition=balanced"});
  EXPECT_EQ(experiment.parallel.pp, 2);
  EXPECT_EQ(experiment.parallel.partition, PartitionRule::Balanced);
}

TEST(ExperimentOverrides, MistakesAreErrorsThatLeaveTheExperimentAlone) {
  Experiment experiment = default_experiment();
  const auto error_of = [&](const std::string& assignment) -> std::string {
    try {
      apply_override(experiment, assignment);
    } catch (const ExperimentError& error) {
      return error.what();
    }
    return "";
  };
  std::string message = error_of("parallel.schedul=gpipe");
  EXPECT_MENTIONS(message, "override path 'parallel.schedul' does not exist");
  EXPECT_MENTIONS(message, "did you mean 'schedule'");
  EXPECT_MENTIONS(error_of("model.layers.9.out=3"), "override path 'model.layers.9.out' does not exist");
  EXPECT_MENTIONS(error_of("model.layers.9.out=3"), "has 7 entries");
  EXPECT_MENTIONS(error_of("model.layers.1.out=3"), "does not exist");  // a relu has no out
  EXPECT_MENTIONS(error_of("parallel.pp.x=3"), "does not exist");
  EXPECT_MENTIONS(error_of("parallel.pp"), "must look like key.path=value");
  EXPECT_MENTIONS(error_of("parallel.pp=four"), "parallel.pp must be an integer, got \"four\"");
  EXPECT_MENTIONS(error_of("parallel.pp=99"), "pp = 99 but the model has 7 splittable layers");
  EXPECT_MENTIONS(error_of("parallel.schedule=zb"), "is not a schedule");
  EXPECT_EQ(experiment.parallel.pp, 2);
  EXPECT_EQ(experiment.parallel.schedule, ScheduleKind::OneFOneB);
}

TEST(ExperimentPaths, RelativeDataPathsResolveBesideTheFileFirst) {
  TempFolder folder;
  const fs::path experiments = folder.path() / "experiments";
  fs::create_directories(experiments / "data" / "mnist");
  fs::create_directories(folder.path() / "only_in_working_dir");

  auto document = testing::small_experiment_json();
  document["data"] = {{"source", "mnist"}, {"path", "data/mnist"}};
  document["model"]["input"] = {784};
  document["model"]["layers"][4]["out"] = 10;
  const fs::path file = experiments / "run.json";
  write_file(file, document.dump());

  const WorkingDirectory working_dir(folder.path());
  const Experiment beside = load_experiment(file.string());
  EXPECT_EQ(beside.data.path, "data/mnist");  // kept as written
  EXPECT_TRUE(fs::path(beside.data.resolved_path).is_absolute());
  EXPECT_TRUE(fs::equivalent(beside.data.resolved_path, experiments / "data" / "mnist"));

  // Not beside the file, but in the working directory.
  document["data"]["path"] = "only_in_working_dir";
  write_file(file, document.dump());
  const Experiment from_working_dir = load_experiment(file.string());
  EXPECT_TRUE(fs::equivalent(from_working_dir.data.resolved_path, folder.path() / "only_in_working_dir"));

  // Nowhere: point beside the file, where the user most likely meant.
  document["data"]["path"] = "not_there";
  write_file(file, document.dump());
  const Experiment nowhere = load_experiment(file.string());
  EXPECT_EQ(fs::path(nowhere.data.resolved_path), (fs::absolute(experiments) / "not_there").lexically_normal());

  // Overrides re-resolve against the same file.
  Experiment edited = beside;
  apply_override(edited, "data.path=data/mnist/../mnist");
  EXPECT_TRUE(fs::equivalent(edited.data.resolved_path, experiments / "data" / "mnist"));
  EXPECT_EQ(edited.file_path, beside.file_path);

  // Absolute paths stay as they are.
  document["data"]["path"] = (folder.path() / "only_in_working_dir").string();
  const Experiment absolute = parse_experiment(document.dump());
  EXPECT_TRUE(fs::equivalent(absolute.data.resolved_path, folder.path() / "only_in_working_dir"));
}

TEST(ExperimentExamples, EveryExampleLoadsAndValidates) {
  const fs::path examples = fs::path(PIPELAB_SOURCE_DIR) / "examples";
  int count = 0;
  // The app's preset files (examples/presets/) are experiment files too.
  for (const auto& entry : fs::recursive_directory_iterator(examples)) {
    if (entry.path().extension() != ".json") continue;
    ++count;
    SCOPED_TRACE(entry.path().filename().string());
    Experiment experiment;
    ASSERT_NO_THROW(experiment = load_experiment(entry.path().string()));
    EXPECT_TRUE(validate_experiment(experiment).empty());
    EXPECT_FALSE(experiment.name.empty());
    // Saving and re-reading an example changes nothing.
    expect_same_experiment(experiment, parse_experiment(experiment_to_json(experiment)));
    // MNIST data may be absent here: only check where the path points.
    if (experiment.data.source == "mnist") {
      EXPECT_EQ(experiment.data.path, "../../shared/datasets/mnist-t10k");
      EXPECT_TRUE(fs::path(experiment.data.resolved_path).is_absolute());
      EXPECT_EQ(fs::path(experiment.data.resolved_path),
                (fs::absolute(examples) / "../../shared/datasets/mnist-t10k").lexically_normal());
    }
  }
  EXPECT_GE(count, 11);
  for (const char* name : {"mnist_mlp_1f1b", "mnist_gpipe", "spiral_interleaved", "teacher_zb_h1",
                           "pipedream_async", "pipedream_2bw", "dp_ring_allreduce", "tensor_parallel",
                           "dp_tp_pp_mix", "naive_model_parallel", "async_parameter_server"})
    EXPECT_TRUE(fs::exists(examples / (std::string(name) + ".json"))) << name;
}

TEST(ExperimentExamples, TheDefaultExperimentIsSmallAndValid) {
  const Experiment experiment = default_experiment();
  EXPECT_TRUE(validate_experiment(experiment).empty());
  EXPECT_EQ(experiment.data.source, "spiral");
  EXPECT_EQ(input_features(experiment.model), 2);
  EXPECT_EQ(output_features(experiment.model), 3);
  EXPECT_EQ(experiment.parallel.pp, 2);
  EXPECT_EQ(microbatch_size(experiment), 256 / 4);
  // Small: it must train in about a second on one laptop core.
  int64_t params = 0;
  for (const LayerInfo& layer : describe_layers(experiment.model)) params += layer.params;
  EXPECT_LT(params, 500'000);
  expect_same_experiment(experiment, parse_experiment(experiment_to_json(experiment)));
}

}  // namespace
}  // namespace pipelab
