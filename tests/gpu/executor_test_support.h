// Helpers of the CUDA executor's tests: the small experiment the CPU runtime
// tests train (so the two backends are compared on the same numbers), running
// a whole experiment on a backend, and comparing loss curves.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/io/experiment.h"
#include "core/runtime/executor.h"
#include "core/trace/event_sink.h"
#include "gpu/executor/backend_registration.h"

namespace pipelab::gpu::testing {

// 2-16-16-16-3 MLP (relu) on 3 noisy Gaussian blobs (600 samples, 480 train),
// batch 32, 20 steps of SGD with momentum, one device, FP32.
inline Experiment small_experiment(const std::string& backend = "cuda") {
  Experiment experiment;
  experiment.name = "cuda executor test";
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
  experiment.training.optimizer.type = "sgd";
  experiment.training.optimizer.lr = 0.2;
  experiment.training.optimizer.momentum = 0.9;
  experiment.parallel.schedule = ScheduleKind::OneFOneB;
  experiment.simulation.profile = "h200";
  experiment.backend.type = backend;
  return experiment;
}

inline Experiment with_plan(Experiment experiment, ScheduleKind schedule, int pp, int microbatches,
                            int dp = 1, int tp = 1, int chunks = 1) {
  experiment.parallel.schedule = schedule;
  experiment.parallel.pp = pp;
  experiment.parallel.microbatches = microbatches;
  experiment.parallel.dp = dp;
  experiment.parallel.tp = tp;
  experiment.parallel.chunks = chunks;
  return experiment;
}

inline Experiment on_backend(Experiment experiment, const std::string& backend) {
  experiment.backend.type = backend;
  return experiment;
}

struct RunOutput {
  RunState state = RunState::Ready;
  std::string error;
  Trace trace;
  std::vector<std::string> messages;
  std::vector<double> losses() const {
    std::vector<double> values;
    for (const StepMetrics& metrics : trace.steps) values.push_back(metrics.loss);
    return values;
  }
};

inline void drain_into(EventSink& sink, RunOutput& output) {
  const EventBatch batch = sink.drain();
  append_batch(output.trace, batch);
  output.messages.insert(output.messages.end(), batch.messages.begin(), batch.messages.end());
}

// Registers "cuda" (idempotent), builds, starts and waits for the run.
inline RunOutput run_experiment(const Experiment& experiment, const ExecutorOptions& options = {}) {
  register_cuda_backend();
  RunOutput output;
  EventSink sink;
  {
    std::unique_ptr<Executor> executor = make_executor(experiment, sink, options);
    executor->start();
    executor->wait();
    output.state = executor->state();
    output.error = executor->error();
  }
  drain_into(sink, output);
  output.trace.source = "measured";
  return output;
}

// Polls until the executor is Paused or has ended; fails the test after 30 s.
inline void wait_for_pause(const Executor& executor) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
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

// Step by step, |actual - expected| <= rtol * max(1, |expected|).
inline void expect_same_curve(const std::vector<double>& expected,
                              const std::vector<double>& actual, double rtol,
                              const std::string& what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], rtol * std::max(1.0, std::abs(expected[i])))
        << what << " step " << i;
}

}  // namespace pipelab::gpu::testing
