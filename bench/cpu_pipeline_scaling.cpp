// Benchmark: how the CPU executor's step time scales with pipeline and data
// parallelism on this machine. The same 784-512-512-512-10 ReLU MLP (batch
// 256, SGD with momentum, synthetic "teacher" data so no files are needed) is
// trained for pp in {1, 2, 4} and dp in {1, 2}, 1F1B with 8 micro-batches per
// replica when pp > 1. Each virtual device is one thread; on a machine with
// fewer cores than devices they share cores, which the measured times show.
// The "replay" column lays the measured op durations out on the schedule
// (core/sim/replay.h): the step time with one core per device, if each op
// took as long as it was measured to take (ops measured while threads shared
// cores are themselves slower, so on a small machine this is pessimistic).
//
// Prints a table of mean step times (after warm-up steps) and their ratio to
// pp = 1, dp = 1 measured in the same run.
//
// Usage: cpu_pipeline_scaling [steps=20] [warmup=3]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "core/io/experiment.h"
#include "core/sim/experiment_prediction.h"
#include "core/runtime/cpu_executor.h"
#include "core/sim/replay.h"

namespace {

using namespace pipelab;

Experiment mlp_experiment(int pp, int dp, int steps) {
  Experiment experiment;
  experiment.name = "cpu pipeline scaling";
  experiment.seed = 1;
  experiment.model.input = {784};
  for (int64_t width : {512, 512, 512}) {
    experiment.model.layers.push_back({LayerType::Linear, width, true, 0.0});
    experiment.model.layers.push_back({LayerType::Relu, 0, true, 0.0});
  }
  experiment.model.layers.push_back({LayerType::Linear, 10, true, 0.0});
  experiment.data.source = "teacher";
  experiment.data.features = 784;
  experiment.data.classes = 10;
  experiment.data.samples = 4096;
  experiment.data.validation_fraction = 0.0;
  experiment.training.batch_size = 256;
  experiment.training.steps = steps;
  experiment.training.optimizer.type = "sgd";
  experiment.training.optimizer.lr = 0.01;
  experiment.training.optimizer.momentum = 0.9;
  experiment.parallel.pp = pp;
  experiment.parallel.dp = dp;
  experiment.parallel.microbatches = pp > 1 ? 8 : 1;
  experiment.parallel.schedule = ScheduleKind::OneFOneB;
  return experiment;
}

struct Measurement {
  double step_s = 0;      // mean measured step time after warm-up
  double bubble = 0;      // mean measured bubble fraction after warm-up
  double replayed_s = 0;  // the measured durations laid out with a core per device
};

Measurement measure(int pp, int dp, int steps, int warmup) {
  const Experiment experiment = mlp_experiment(pp, dp, steps + warmup);
  EventSink sink;
  CpuExecutor executor(experiment, sink);
  executor.start();
  executor.wait();
  if (executor.state() != RunState::Finished) {
    std::fprintf(stderr, "pp %d dp %d: %s\n", pp, dp, executor.error().c_str());
    std::exit(1);
  }
  Trace trace;
  append_batch(trace, sink.drain());
  Measurement result;
  for (const StepMetrics& step : trace.steps) {
    if (step.step < warmup) continue;
    result.step_s += step.step_time_s / steps;
    result.bubble += step.bubble_measured / steps;
  }
  // Replay the steps after warm-up only.
  Trace steady = trace;
  std::erase_if(steady.events, [&](const TraceEvent& event) { return event.op.step < warmup; });
  const Schedule& window = executor.program().schedule();
  const CostModel fallback = experiment_cost_model(experiment, executor.stage_profiles());
  result.replayed_s = replay_measured(window, steady, fallback).makespan;
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 20;
  const int warmup = argc > 2 ? std::atoi(argv[2]) : 3;
  if (steps < 1 || warmup < 0) {
    std::fprintf(stderr, "usage: cpu_pipeline_scaling [steps >= 1] [warmup >= 0]\n");
    return 2;
  }
  std::printf(
      "CPU executor scaling: 784-512-512-512-10 MLP, batch 256, 1F1B, %d steps after %d "
      "warm-up, %u hardware threads\n",
      steps, warmup, std::thread::hardware_concurrency());
  std::printf("%3s %3s %8s %12s %9s %8s %12s %9s\n", "pp", "dp", "devices", "step (ms)", "vs 1x1",
              "bubble", "replay (ms)", "vs 1x1");
  Measurement baseline;
  for (int dp : {1, 2}) {
    for (int pp : {1, 2, 4}) {
      const Measurement m = measure(pp, dp, steps, warmup);
      if (pp == 1 && dp == 1) baseline = m;
      std::printf("%3d %3d %8d %12.3f %9.2f %8.3f %12.3f %9.2f\n", pp, dp, pp * dp, 1e3 * m.step_s,
                  m.step_s / baseline.step_s, m.bubble, 1e3 * m.replayed_s,
                  m.replayed_s / baseline.replayed_s);
    }
  }
  return 0;
}
