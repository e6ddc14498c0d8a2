// Benchmark: the pipeline bubble a real CUDA run measures beside the one the
// simulator predicts. A 4-stage 1F1B experiment (an MLP of equal hidden
// layers, balanced over the stages) trains on the CUDA executor, one virtual
// device per GPU when there are 4, otherwise several per GPU; the measured
// bubble is each step's 1 - busy / (devices x makespan) over the GPU-timed
// ops (StepMetrics::bubble_measured), averaged after the warm-up steps. The
// simulated bubble is the prediction for the same experiment on the h200
// device profile; the textbook (p - 1) / (m + p - 1) is printed too.
// Prints one JSON line.
//
// Usage: gpu_pipeline_bubble [microbatches=8] [width=4096] [steps=20] [warmup=5]
// Virtual devices that share a GPU also share its SMs, so on one GPU the
// measured bubble is not the simulator's (which gives each device its own
// GPU); with 4 GPUs the two should agree closely.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/io/experiment.h"
#include "core/io/experiment_io.h"
#include "core/sim/experiment_prediction.h"
#include "core/trace/event_sink.h"
#include "gpu/executor/cuda_executor.h"
#include "gpu/device/device_query.h"

namespace {

using namespace pipelab;

int argument(int argc, char** argv, int index, int fallback) {
  return argc > index ? std::atoi(argv[index]) : fallback;
}

Experiment bubble_experiment(int microbatches, int64_t width, int steps) {
  Experiment experiment;
  experiment.name = "gpu pipeline bubble";
  experiment.seed = 1;
  experiment.model.input = {512};
  // 8 equal hidden layers: 2 per stage.
  for (int i = 0; i < 8; ++i) {
    experiment.model.layers.push_back({LayerType::Linear, width, true, 0.0});
    experiment.model.layers.push_back({LayerType::Relu, 0, true, 0.0});
  }
  experiment.model.layers.push_back({LayerType::Linear, 10, true, 0.0});
  experiment.model.loss = LossType::CrossEntropy;
  experiment.data.source = "blobs";
  experiment.data.features = 512;
  experiment.data.classes = 10;
  experiment.data.samples = 20000;
  experiment.data.validation_fraction = 0.0;
  experiment.training.batch_size = 256 * microbatches;
  experiment.training.steps = steps;
  experiment.training.optimizer.type = "sgd";
  experiment.training.optimizer.lr = 0.01;
  experiment.parallel.pp = 4;
  experiment.parallel.microbatches = microbatches;
  experiment.parallel.schedule = ScheduleKind::OneFOneB;
  experiment.simulation.profile = "h200";
  experiment.backend.type = "cuda";
  return experiment;
}

}  // namespace

int main(int argc, char** argv) {
  const int microbatches = argument(argc, argv, 1, 8);
  const int64_t width = argument(argc, argv, 2, 4096);
  const int steps = argument(argc, argv, 3, 20);
  const int warmup = argument(argc, argv, 4, 5);
  if (microbatches < 1 || width < 1 || steps <= warmup || warmup < 0) {
    std::fprintf(stderr,
                 "usage: gpu_pipeline_bubble [microbatches>=1] [width>=1] [steps>warmup] "
                 "[warmup>=0]\n");
    return 2;
  }
  const Experiment experiment = bubble_experiment(microbatches, width, steps);
  const std::vector<std::string> problems = validate_experiment(experiment);
  if (!problems.empty()) {
    std::fprintf(stderr, "gpu_pipeline_bubble: %s\n", problems.front().c_str());
    return 2;
  }
  const double simulated = predict_experiment(experiment).result.bubble_fraction;
  const gpu::GpuInventory inventory = gpu::query_gpus();
  if (inventory.gpus.empty()) {
    std::printf(
        "{\"bench\": \"gpu_pipeline_bubble\", \"skipped\": \"%s\", "
        "\"simulated_bubble_h200\": %.4f}\n",
        inventory.unavailable_reason.c_str(), simulated);
    return 0;
  }

  const double p = 4, m = microbatches;
  const double theory = (p - 1) / (m + p - 1);

  EventSink sink;
  Trace trace;
  try {
    gpu::CudaExecutor executor(experiment, sink);
    executor.start();
    executor.wait();
    append_batch(trace, sink.drain());
    if (executor.state() != RunState::Finished) {
      std::fprintf(stderr, "gpu_pipeline_bubble: %s\n", executor.error().c_str());
      return 1;
    }
  } catch (const ExperimentError& error) {
    std::fprintf(stderr, "gpu_pipeline_bubble: %s\n", error.what());
    return 2;
  }

  double bubble_sum = 0, time_sum = 0;
  int counted = 0;
  for (const StepMetrics& step : trace.steps) {
    if (step.step < warmup) continue;
    bubble_sum += step.bubble_measured;
    time_sum += step.step_time_s;
    ++counted;
  }
  const double measured = bubble_sum / counted;
  const double step_ms = 1e3 * time_sum / counted;
  std::printf(
      "{\"bench\": \"gpu_pipeline_bubble\", \"schedule\": \"1f1b\", \"pp\": 4, "
      "\"microbatches\": %d, \"width\": %lld, \"gpus\": %zu, \"gpu\": \"%s\", "
      "\"measured_bubble\": %.4f, \"simulated_bubble_h200\": %.4f, \"theory_bubble\": %.4f, "
      "\"measured_minus_simulated\": %.4f, \"ms_per_step\": %.3f, \"steps_averaged\": %d}\n",
      microbatches, static_cast<long long>(width), inventory.gpus.size(),
      inventory.gpus.front().name.c_str(), measured, simulated, theory, measured - simulated,
      step_ms, counted);
  return 0;
}
