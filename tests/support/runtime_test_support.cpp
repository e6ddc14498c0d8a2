#include "tests/support/runtime_test_support.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/cli/run_prediction.h"
#include "core/plan/stage_profile.h"
#include "tests/support/gpt_model.h"

namespace pipelab::testing {

namespace {
std::string& backend_setting() {
  static std::string backend = "cpu";
  return backend;
}
}  // namespace

void set_backend_under_test(const std::string& backend) { backend_setting() = backend; }
const std::string& backend_under_test() { return backend_setting(); }

Experiment small_experiment() {
  Experiment experiment;
  experiment.name = "runtime test";
  experiment.seed = 7;
  experiment.model.input = {2};
  const auto linear = [](int64_t out) { return LayerSpec{LayerType::Linear, out, true, 0.0}; };
  const LayerSpec relu{LayerType::Relu, 0, true, 0.0};
  experiment.model.layers = {linear(16), relu, linear(16), relu, linear(16), relu, linear(3)};
  experiment.model.loss = LossType::CrossEntropy;
  experiment.data.source = "blobs";
  experiment.data.samples = 600;
  experiment.data.classes = 3;
  experiment.data.features = 2;
  experiment.data.noise = 1.0;
  experiment.data.validation_fraction = 0.2;
  experiment.training.batch_size = 32;
  experiment.training.steps = 20;
  experiment.training.eval_every = 0;
  experiment.training.optimizer.type = "sgd";
  experiment.training.optimizer.lr = 0.2;
  experiment.training.optimizer.momentum = 0.9;
  experiment.parallel.schedule = ScheduleKind::OneFOneB;
  experiment.simulation.profile = "cpu-core";
  experiment.backend.type = backend_under_test();
  return experiment;
}

Experiment small_conv_experiment(bool sync) {
  Experiment experiment = small_experiment();
  experiment.data.features = 18;
  experiment.model.input = {2, 3, 3};
  LayerSpec conv;
  conv.type = LayerType::Conv2d;
  conv.out = 4;
  conv.kernel = 3;
  conv.padding = 1;
  LayerSpec norm;
  norm.type = LayerType::BatchNorm;
  norm.sync = sync;
  LayerSpec relu;
  relu.type = LayerType::Relu;
  LayerSpec residual;
  residual.type = LayerType::ResidualBlock;
  residual.out = 6;
  residual.stride = 2;
  residual.sync = sync;
  LayerSpec pool;
  pool.type = LayerType::GlobalAvgPool;
  LayerSpec classifier;
  classifier.out = 3;
  experiment.model.layers = {conv, norm, relu, residual, pool, classifier};
  experiment.training.optimizer.lr = 0.1;
  return experiment;
}

Experiment two_convolution_experiment() {
  Experiment experiment = small_conv_experiment(false);
  // small_conv_experiment's conv, relu, pool and classifier.
  const std::vector<LayerSpec> layers = experiment.model.layers;
  const LayerSpec& conv = layers[0];
  experiment.model.layers = {conv, layers[2], conv, layers[4], layers[5]};
  return experiment;
}

LayerSpec moe_spec(int64_t experts, int64_t top_k, double capacity_factor) {
  LayerSpec moe;
  moe.type = LayerType::Moe;
  moe.experts = experts;
  moe.top_k = top_k;
  moe.ffn = 16;
  moe.capacity_factor = capacity_factor;
  return moe;
}

Experiment gpt_with_expert_blocks(int64_t top_k, double capacity_factor) {
  Experiment experiment = tiny_gpt_experiment();
  for (LayerSpec& layer : experiment.model.layers) {
    if (layer.type != LayerType::TransformerBlock) continue;
    layer.experts = 4;
    layer.top_k = top_k;
    layer.ffn = 32;
    layer.capacity_factor = capacity_factor;
  }
  return experiment;
}

Experiment small_moe_experiment(int64_t top_k, double capacity_factor) {
  Experiment experiment = small_experiment();
  experiment.data.noise = 0.3;
  const LayerSpec relu{LayerType::Relu, 0, true, 0.0};
  experiment.model.layers = {LayerSpec{LayerType::Linear, 16, true, 0.0}, relu,
                             moe_spec(4, top_k, capacity_factor),
                             LayerSpec{LayerType::Linear, 3, true, 0.0}};
  return experiment;
}

Experiment tiny_gpt_experiment() {
  Experiment experiment;
  experiment.name = "tiny gpt test";
  experiment.seed = 5;
  experiment.model = gpt_model({.seq = 8, .vocab = 16, .dim = 16, .heads = 2});
  experiment.model.loss = LossType::CrossEntropy;
  experiment.data.source = "copy";
  experiment.data.samples = 512;
  experiment.data.vocab = 16;
  experiment.data.validation_fraction = 0.125;
  experiment.training.batch_size = 16;
  experiment.training.steps = 20;
  experiment.training.eval_every = 0;
  experiment.training.optimizer.type = "adam";
  experiment.training.optimizer.lr = 0.003;
  experiment.parallel.schedule = ScheduleKind::OneFOneB;
  experiment.simulation.profile = "cpu-core";
  experiment.backend.type = "cpu";
  return experiment;
}

Experiment on_backend(Experiment experiment, const std::string& backend) {
  experiment.backend.type = backend;
  return experiment;
}

std::vector<int64_t> stage_parameter_bytes(const Experiment& experiment) {
  std::vector<int64_t> bytes;
  for (const StageProfile& profile :
       profile_stages(experiment.model, experiment.parallel, microbatch_size(experiment)))
    bytes.push_back(profile.params * 4);
  return bytes;
}

int process_threads() {
  int count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task"))
    ++count;
  return count;
}

int process_threads_settled(int expected) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  int count = process_threads();
  while (count != expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    count = process_threads();
  }
  return count;
}

int64_t resident_bytes() {
  // statm: total program size, then resident pages.
  std::ifstream statm("/proc/self/statm");
  int64_t size_pages = 0;
  int64_t resident_pages = 0;
  statm >> size_pages >> resident_pages;
  return resident_pages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

void expect_same_curve(const std::vector<double>& expected, const std::vector<double>& actual,
                       double rtol, const std::string& what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], rtol * std::max(1.0, std::abs(expected[i])))
        << what << " step " << i;
}

Experiment with_plan(Experiment experiment, ScheduleKind schedule, int pp, int microbatches, int dp,
                     int tp, int chunks) {
  experiment.parallel.schedule = schedule;
  experiment.parallel.pp = pp;
  experiment.parallel.microbatches = microbatches;
  experiment.parallel.dp = dp;
  experiment.parallel.tp = tp;
  experiment.parallel.chunks = chunks;
  return experiment;
}

std::vector<double> RunOutput::losses() const {
  std::vector<double> values;
  for (const StepMetrics& metrics : trace.steps) values.push_back(metrics.loss);
  return values;
}

void wait_for_pause(const Executor& executor) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto settled = [](RunState state) {
    return state == RunState::Paused || state == RunState::Finished || state == RunState::Stopped ||
           state == RunState::Failed;
  };
  while (!settled(executor.state())) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "the run neither paused nor ended; it is "
                    << run_state_name(executor.state());
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void drain_into(EventSink& sink, RunOutput& output) {
  const EventBatch batch = sink.drain();
  append_batch(output.trace, batch);
  output.messages.insert(output.messages.end(), batch.messages.begin(), batch.messages.end());
}

RunOutput run_experiment(const Experiment& experiment, const ExecutorOptions& options) {
  RunOutput output;
  EventSink sink;
  {
    ExecutorOptions predicted = options;
    predicted.prediction = predict_run(experiment);
    std::unique_ptr<Executor> executor = make_executor(experiment, sink, predicted);
    executor->start();
    executor->wait();
    output.state = executor->state();
    output.error = executor->error();
  }
  drain_into(sink, output);
  output.trace.source = "measured";
  return output;
}

std::vector<double> losses_of(const Experiment& experiment, const std::string& what) {
  const RunOutput run = run_experiment(experiment);
  EXPECT_EQ(run.state, RunState::Finished) << what << ": " << run.error;
  return run.losses();
}

}  // namespace pipelab::testing
