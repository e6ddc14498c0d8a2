// pipelab-cli simulate: predict a run's timeline, bubbles and memory.
#include <fstream>
#include <optional>
#include <ostream>

#include "core/cli/cli_args.h"
#include "core/cli/cli_commands.h"
#include "core/cli/plan_options.h"
#include "core/cli/simulation_report.h"
#include "core/io/experiment_io.h"
#include "core/sim/experiment_prediction.h"
#include "core/schedule/lowering.h"
#include "core/trace/chrome_trace.h"
#include "core/trace/csv_export.h"

namespace pipelab {

// Writes the trace files a command was asked for; UsageError when one cannot be written.
void write_requested_traces(const ParsedArgs& parsed, const Trace& trace) {
  std::string error;
  if (!export_trace_files(trace, parsed.get("trace"), parsed.get("csv"), &error))
    throw UsageError(error);
}

// --config FILE plus every --set, validated.
Experiment experiment_from_args(const ParsedArgs& parsed) {
  Experiment experiment = load_experiment(parsed.get("config"));
  // All overrides first, then one validation: several --set may only fit together.
  apply_overrides(experiment, parsed.all("set"));
  const auto problems = validate_experiment(experiment);
  if (!problems.empty()) throw ExperimentError(problems.front());
  return experiment;
}

int command_simulate(const std::vector<std::string>& args, std::ostream& out) {
  const ParsedArgs parsed = parse_args(
      "simulate", args,
      {{"config"}, {"schedule"}, {"stages"}, {"microbatches"}, {"dp"}, {"tp"}, {"chunks"},
       {"recompute", false}, {"offload"}, {"update"}, {"staleness"}, {"steps"}, {"cost"}, {"profile"},
       {"set", true, true}, {"trace"}, {"csv"}});
  const int steps = parsed.get_int("steps", 0, 0, 64);
  std::optional<UnitCosts> unit;
  if (parsed.has("cost")) unit = parse_unit_costs(parsed.get("cost"));

  // Every event and memory sample only when a trace file wants them: a large
  // plan's metrics alone take a fraction of the time and memory. Without
  // them, a synchronous run's replica 0 stands for every replica (they run
  // alike; the report lists each): a sixth of the work at dp 6.
  SimulationOptions options;
  const bool tracing = parsed.has("trace") || parsed.has("csv");
  options.record_events = options.record_memory = tracing;
  const auto one_replica_for_all = [&](const ParallelPlan& plan) {
    return !tracing && replicas_run_alike(plan);
  };
  Schedule schedule;
  SimulationResult result;
  nlohmann::ordered_json throughput;  // null unless the run is timed on a device
  if (parsed.has("config")) {
    for (const char* flag : {"schedule", "stages", "microbatches", "dp", "tp", "chunks", "update",
                             "staleness", "recompute", "offload"})
      if (parsed.has(flag))
        throw UsageError(std::string("--") + flag + " cannot be combined with --config; use --set parallel." +
                         (std::string(flag) == "stages" ? "pp" : flag) + "=VALUE");
    Experiment experiment = experiment_from_args(parsed);
    if (parsed.has("profile")) apply_override(experiment, "simulation.profile=" + parsed.get("profile"));
    options.first_replica_only = one_replica_for_all(experiment.parallel);
    Prediction prediction = predict_experiment(experiment, unit, steps, options);
    if (!unit && experiment.simulation.profile != "unit")
      throughput = throughput_to_json(experiment, predicted_throughput(experiment, prediction));
    schedule = std::move(prediction.schedule);
    result = std::move(prediction.result);
  } else {
    if (parsed.has("set"))
      throw UsageError("--set needs --config; without a config use --dp, --tp, --chunks, --recompute, --offload");
    if (parsed.has("profile"))
      throw UsageError("--profile needs --config (a model to take FLOPs from); without one use --cost");
    const ParallelPlan plan = plan_from_flags(parsed);
    options.first_replica_only = one_replica_for_all(plan);
    schedule = build_schedule(plan, {}, steps, options.first_replica_only);
    result = simulate(schedule, CostModel::unit(unit.value_or(UnitCosts{})), options);
  }
  write_requested_traces(parsed, result.trace);
  nlohmann::ordered_json report = simulation_to_json(schedule, result);
  if (!throughput.is_null()) report["throughput"] = std::move(throughput);
  out << report.dump(2) << "\n";
  return kExitOk;
}

int command_validate(const std::vector<std::string>& args, std::ostream& out) {
  const ParsedArgs parsed = parse_args("validate", args, {{"config"}, {"set", true, true}});
  if (!parsed.has("config")) throw UsageError("validate needs --config FILE");
  const Experiment experiment = experiment_from_args(parsed);
  out << "ok: " << experiment.name << "\n";
  return kExitOk;
}

}  // namespace pipelab
