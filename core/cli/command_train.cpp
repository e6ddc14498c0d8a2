// pipelab-cli train: real training on the CPU (or CUDA) backend, with progress
// on stderr and a JSON summary on stdout.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <ostream>
#include <thread>

#include "core/cli/cli_args.h"
#include "core/cli/cli_commands.h"
#include "core/cli/simulation_report.h"
#include "core/cli/training_summary.h"
#include "core/io/experiment_io.h"
#include "core/io/experiment_prediction.h"
#include "core/io/run_file.h"
#include "core/runtime/executor.h"
#include "core/sim/replay.h"
#include "core/text/quoted_excerpt.h"
#include "core/trace/chrome_trace.h"
#include "core/trace/trace_events.h"

namespace pipelab {

Experiment experiment_from_args(const ParsedArgs& parsed);            // command_simulate.cpp
void write_requested_traces(const ParsedArgs& parsed, const Trace& trace);  // command_simulate.cpp

namespace {

bool is_terminal(RunState state) {
  return state == RunState::Finished || state == RunState::Stopped || state == RunState::Failed;
}

void print_progress(std::ostream& err, const StepMetrics& step, int total) {
  err << "step " << step.step + 1 << "/" << total << "  loss " << step.loss;
  if (std::isfinite(step.val_accuracy)) err << "  val_acc " << step.val_accuracy;
  err << "  " << step.step_time_s * 1e3 << " ms  " << step.samples_per_s << " samples/s\n";
}

// The measured op durations laid out on the schedule's dependencies: the shape
// the run would have with one core per device (see core/sim/replay.h).
void add_replay(const Experiment& experiment, const Trace& measured, const std::string& trace_path,
                nlohmann::ordered_json& summary) {
  if (measured.events.empty()) return;
  const Prediction prediction = predict_experiment(experiment);
  SimulationResult replay = replay_measured(prediction.schedule, measured, prediction.cost);
  summary["bubble_fraction_replayed"] = replay.bubble_fraction;
  summary["step_time_ms_replayed"] = replay.makespan * 1e3 / prediction.schedule.steps;
  if (trace_path.empty()) return;
  replay.trace.source = "replayed";
  std::ofstream file(trace_path);
  write_chrome_trace(replay.trace, file);
  if (!file) throw UsageError("cannot write --replay-trace file " + quoted_excerpt(trace_path, kPathExcerptBytes));
}

}  // namespace

int command_train(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                  const CliHooks& hooks) {
  (void)hooks;  // the CUDA backend registers itself with the executor factory
  const ParsedArgs parsed = parse_args("train", args,
                                       {{"config"}, {"set", true, true}, {"steps"}, {"backend"},
                                        {"trace"}, {"csv"}, {"summary"}, {"replay-trace"}, {"save-run"},
                                        {"quiet", false}});
  if (!parsed.has("config")) throw UsageError("train needs --config FILE (see examples/)");
  ParsedArgs with_overrides = parsed;
  if (parsed.has("backend"))
    with_overrides.values["set"].push_back("backend.type=" + parsed.get("backend"));
  if (parsed.has("steps"))
    with_overrides.values["set"].push_back(
        "training.steps=" + std::to_string(parsed.get_int("steps", 1, 1, 10000000)));
  const Experiment experiment = experiment_from_args(with_overrides);
  const bool quiet = parsed.has("quiet");

  EventSink sink;
  std::unique_ptr<Executor> executor = make_executor(experiment, sink);
  Trace trace;
  trace.source = "measured";
  trace.schedule = schedule_name(experiment.parallel.schedule);
  const ParallelPlan& plan = experiment.parallel;
  trace.devices = describe_devices(plan.dp, plan.tp, plan.pp, plan.chunks, plan.layout().v_shape);

  if (!quiet)
    err << "training " << quoted_excerpt(experiment.name, kPathExcerptBytes) << " on " << plan.devices() << " "
        << experiment.backend.type << " device(s), " << executor->steps_total() << " steps\n";
  executor->start();
  auto drain = [&] {
    EventBatch batch = sink.drain();
    if (!quiet) {
      for (const auto& message : batch.messages) err << message << "\n";
      for (const auto& step : batch.steps) print_progress(err, step, executor->steps_total());
    }
    append_batch(trace, batch);
  };
  while (!is_terminal(executor->state())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    drain();
  }
  executor->wait();
  drain();

  write_requested_traces(parsed, trace);
  if (parsed.has("save-run")) {
    // A run file the app reopens (Runs > Open a run…): a run measured on a
    // headless GPU server, seen and compared on a laptop.
    RunRecord record;
    record.name = experiment.name + " · " + trace.schedule + " · " + experiment.backend.type;
    record.experiment = experiment;
    record.trace = trace;
    try {
      save_run(record, parsed.get("save-run"));
    } catch (const RunFileError& error) {
      throw UsageError(std::string("--save-run: ") + error.what());
    }
  }
  auto summary = training_summary_json(experiment, trace, executor->state(), executor->error());
  add_replay(experiment, trace, parsed.get("replay-trace"), summary);
  const std::string text = summary.dump(2);
  if (parsed.has("summary")) {
    std::ofstream file(parsed.get("summary"));
    if (!(file << text << "\n"))
      throw UsageError("cannot write --summary file " + quoted_excerpt(parsed.get("summary"), kPathExcerptBytes));
  }
  out << text << "\n";
  if (executor->state() == RunState::Failed) {
    err << "pipelab-cli: " << executor->error() << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace pipelab
