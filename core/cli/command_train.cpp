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
#include "core/runtime/rank_session.h"
#include "core/cli/simulation_report.h"
#include "core/cli/training_summary.h"
#include "core/cli/run_prediction.h"
#include "core/io/experiment_io.h"
#include "core/sim/experiment_prediction.h"
#include "core/io/run_file.h"
#include "core/live/live_server.h"
#include "core/runtime/process_share.h"
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

// This process's part of a run mpirun spread over processes, or null when
// it runs alone.
std::unique_ptr<RankSession> join_ranks(const ParsedArgs& parsed, const CliHooks& hooks) {
  const int ranks = launched_ranks();
  if (ranks == 1) {
    for (const char* option : {"devices-per-rank", "rank-timeout"})
      if (parsed.has(option))
        throw UsageError(std::string("--") + option + " is for runs over processes: mpirun -np N pipelab-cli train ...");
    return nullptr;
  }
  if (!hooks.join_ranks)
    throw UsageError("this pipelab-cli was started as one of " + std::to_string(ranks) +
                     " processes (mpirun), but was built without MPI (PIPELAB_MPI=OFF or no OpenMPI found): "
                     "install libopenmpi-dev and rebuild, or run it without mpirun");
  const double silence_limit = parsed.has("rank-timeout") ? parsed.get_int("rank-timeout", 1, 1, 3600) : 5;
  return hooks.join_ranks(silence_limit);
}

// --serve PORT: the run's events for `pipelab --attach HOST:PORT` (rank 0
// serves a run over processes); null without it.
std::unique_ptr<LiveServer> serve_live(const ParsedArgs& parsed, const Experiment& experiment,
                                       const Executor& executor, const RankSession* session, std::ostream& err) {
  if (!parsed.has("serve")) {
    if (parsed.has("serve-allow")) throw UsageError("--serve-allow goes with --serve PORT");
    return nullptr;
  }
  if (session && session->rank() != 0) return nullptr;
  const int port = parsed.get_int("serve", 0, 0, 65535);
  const std::vector<std::string> allowed =
      parsed.has("serve-allow") ? split_allow_list(parsed.get("serve-allow")) : std::vector<std::string>{"127.0.0.1"};
  LiveHello hello;
  hello.experiment_json = experiment_to_json(experiment);
  hello.steps_total = executor.steps_total();
  try {
    auto server = std::make_unique<LiveServer>(port, allowed, hello);
    std::string viewers;
    for (const std::string& address : allowed) viewers += (viewers.empty() ? "" : ", ") + address;
    err << "live view on port " << server->port() << ": pipelab --attach HOST:" << server->port()
        << " (viewers from " << viewers << ")\n";
    return server;
  } catch (const std::exception& error) {
    throw UsageError(error.what());
  }
}

// The run, alone or as one rank of a run over processes (`session`).
int train(const ParsedArgs& parsed, const Experiment& experiment, RankSession* session, std::ostream& out,
          std::ostream& err) {
  ExecutorOptions options;
  if (session) {
    try {
      const int devices_per_rank =
          parsed.has("devices-per-rank") ? parsed.get_int("devices-per-rank", 1, 1, 1 << 20) : 0;
      options.process = &session->join(experiment.parallel.devices(), devices_per_rank);
    } catch (const std::invalid_argument& error) {
      throw UsageError(error.what());
    }
  }
  // Rank 0 speaks for a run over processes.
  const bool quiet = parsed.has("quiet") || (session && session->rank() != 0);

  options.prediction = predict_run(experiment);
  EventSink sink;
  std::unique_ptr<Executor> executor = make_executor(experiment, sink, options);
  Trace trace;
  trace.source = "measured";
  trace.schedule = schedule_name(experiment.parallel.schedule);
  const ParallelPlan& plan = experiment.parallel;
  trace.devices = describe_devices(plan.dp, plan.tp, plan.pp, plan.chunks, plan.layout().v_shape, plan.cp);

  if (!quiet)
    err << "training " << quoted_excerpt(experiment.name, kPathExcerptBytes) << " on " << plan.devices() << " "
        << experiment.backend.type << " device(s), " << executor->steps_total() << " steps\n";
  const std::unique_ptr<LiveServer> server = serve_live(parsed, experiment, *executor, session, err);
  if (session)
    session->start(dynamic_cast<ThreadedExecutor&>(*executor));
  else
    executor->start();
  auto drain = [&] {
    EventBatch batch = sink.drain();
    if (!quiet)
      for_each_in_order(
          batch, [&](const StepMetrics& step) { print_progress(err, step, executor->steps_total()); },
          [&](const std::string& message) { err << message << "\n"; });
    append_batch(trace, batch);
    if (server) {
      server->publish(batch);
      for (const std::string& note : server->take_notes()) err << note << "\n";
    }
  };
  while (!is_terminal(executor->state())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    drain();
  }
  executor->wait();
  std::string failure = executor->state() == RunState::Failed ? executor->error() : "";
  if (session) failure = session->finish(*executor);  // rank 0 also takes the others' last reports
  drain();
  if (session && session->rank() != 0) {
    if (failure.empty()) return kExitOk;
    err << "pipelab-cli (rank " << session->rank() << "): " << failure << "\n";
    session->abort_job(kExitUsage);
  }

  if (server) server->end(failure.empty() ? executor->state() : RunState::Failed, failure);
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
  auto summary = training_summary_json(experiment, trace, failure.empty() ? executor->state() : RunState::Failed,
                                       failure);
  if (session) summary["processes"] = session->summary();
  add_replay(experiment, trace, parsed.get("replay-trace"), summary);
  const std::string text = summary.dump(2);
  if (parsed.has("summary")) {
    std::ofstream file(parsed.get("summary"));
    if (!(file << text << "\n"))
      throw UsageError("cannot write --summary file " + quoted_excerpt(parsed.get("summary"), kPathExcerptBytes));
  }
  out << text << "\n";
  if (!failure.empty()) {
    err << "pipelab-cli: " << failure << "\n";
    if (session) session->abort_job(kExitUsage);
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace

int command_train(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                  const CliHooks& hooks) {
  // (The CUDA backend registers itself with the executor factory.)
  const ParsedArgs parsed = parse_args("train", args,
                                       {{"config"}, {"set", true, true}, {"steps"}, {"backend"},
                                        {"trace"}, {"csv"}, {"summary"}, {"replay-trace"}, {"save-run"},
                                        {"quiet", false}, {"devices-per-rank"}, {"rank-timeout"}, {"serve"}, {"serve-allow"}});
  if (!parsed.has("config")) throw UsageError("train needs --config FILE (see examples/)");
  ParsedArgs with_overrides = parsed;
  if (parsed.has("backend"))
    with_overrides.values["set"].push_back("backend.type=" + parsed.get("backend"));
  if (parsed.has("steps"))
    with_overrides.values["set"].push_back(
        "training.steps=" + std::to_string(parsed.get_int("steps", 1, 1, 10000000)));
  const Experiment experiment = experiment_from_args(with_overrides);
  const std::unique_ptr<RankSession> session = join_ranks(parsed, hooks);
  if (!session) return train(parsed, experiment, nullptr, out, err);
  try {
    return train(parsed, experiment, session.get(), out, err);
  } catch (const std::exception& error) {
    // The other ranks may be waiting for this one: say why, then end the job.
    err << "pipelab-cli (rank " << session->rank() << "): " << error.what() << "\n";
    session->abort_job(kExitUsage);
  }
  return kExitUsage;  // not reached: abort_job ends the process
}

}  // namespace pipelab
