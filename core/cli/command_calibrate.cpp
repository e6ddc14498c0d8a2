// pipelab-cli calibrate: fit the simulator's device and node to this machine
// from short measured runs on the experiment's backend (cpu or cuda), show how the predictions
// move, and write the measured hardware as files an experiment can name.
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/cli/cli_args.h"
#include "core/cli/cli_commands.h"
#include "core/cli/measured_calibration.h"
#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"
#include "core/io/hardware_file_text.h"
#include "core/sim/experiment_prediction.h"

namespace pipelab {

Experiment experiment_from_args(const ParsedArgs& parsed);  // command_simulate.cpp

namespace {

nlohmann::ordered_json hardware_json(const Experiment& experiment, const ClusterSpec& cluster) {
  const DeviceProfile profile = cluster_device(experiment, cluster);
  return {{"device", cluster.device.id},
          {"node", cluster.node.id},
          {"gemm_gflop_s", profile.flops_per_s / 1e9},
          {"op_overhead_us", profile.op_overhead_s * 1e6},
          {"memory_bandwidth_gb_s", profile.memory_bandwidth / 1e9},
          {"host_link_bandwidth_gb_s", profile.host_link_bandwidth / 1e9},
          {"link_bandwidth_gb_s", profile.link_bandwidth / 1e9},
          {"link_latency_us", profile.link_latency_s * 1e6}};
}

// The saved runs --run names, each with the --set overrides (the base
// device, say) applied to its experiment.
std::vector<RunRecord> saved_runs(const ParsedArgs& parsed) {
  std::vector<RunRecord> runs;
  for (const std::string& path : parsed.all("run")) {
    RunRecord run = load_run(path);
    apply_overrides(run.experiment, parsed.all("set"));
    const auto problems = validate_experiment(run.experiment);
    if (!problems.empty()) throw ExperimentError(path + ": " + problems.front());
    if (run.experiment.simulation.profile == "unit") run.experiment.simulation.profile = "cpu-core";
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace

int command_calibrate(const std::vector<std::string>& args, std::ostream& out) {
  const ParsedArgs parsed = parse_args(
      "calibrate", args,
      {{"config"}, {"run", true, true}, {"set", true, true}, {"steps"}, {"backend"}, {"write"}});
  if (parsed.has("config") == parsed.has("run"))
    throw UsageError(
        "calibrate needs --config FILE (to train and measure it here) or --run RUN.json (runs "
        "measured and saved earlier, pipelab-cli train --save-run), not both");
  if (parsed.has("run") && (parsed.has("steps") || parsed.has("backend")))
    throw UsageError(
        "--steps and --backend measure a new run; with --run the runs are measured already");
  const int steps = parsed.get_int("steps", 5, 1, 1000);
  if (parsed.has("write")) check_device_file_path(parsed.get("write"));
  Experiment experiment;
  CalibrationResult calibration;
  std::string measured_from;
  if (parsed.has("run")) {
    const std::vector<RunRecord> runs = saved_runs(parsed);
    experiment = runs.front().experiment;
    calibration = calibrate_saved_runs(runs);
    measured_from = std::to_string(runs.size()) + " saved run(s) of " + experiment.name;
  } else {
    ParsedArgs with_backend = parsed;
    if (parsed.has("backend"))
      with_backend.values["set"].push_back("backend.type=" + parsed.get("backend"));
    experiment = experiment_from_args(with_backend);
    if (experiment.simulation.profile == "unit") experiment.simulation.profile = "cpu-core";
    calibration = calibrate_measured_profile(experiment, steps);
    measured_from = std::to_string(steps) + " steps of " + experiment.name;
  }
  std::vector<std::string> written;
  if (parsed.has("write")) {
    const std::string device_path = parsed.get("write");
    calibration.cluster.device.name =
        calibration.cluster.device.name + ", measured on this machine";
    calibration.cluster.device.sources["achieved"] =
        "Measured by pipelab-cli calibrate from " + measured_from +
        ": the GEMM rate and op_overhead_us fitted to " +
        std::to_string(calibration.compute_samples) + " compute ops" +
        (calibration.update_samples > 0
             ? ", the memory bandwidth to " + std::to_string(calibration.update_samples) +
                   " optimizer steps"
             : "") +
        "; the memory size is the base device's.";
    calibration.cluster.node.sources["device_link"] =
        "Measured by pipelab-cli calibrate: the bandwidth fitted to " +
        std::to_string(calibration.message_samples) +
        " sends, the latency chosen so the simulated steps match the measured ones.";
    const std::string node_path = save_hardware_files(calibration.cluster, device_path);
    written = {device_path, node_path};
  }

  nlohmann::ordered_json json;
  json["name"] = experiment.name;
  json["backend"] = experiment.backend.type;
  if (parsed.has("run"))
    json["runs_from"] = parsed.all("run");
  else
    json["measured_steps"] = steps;
  json["base"] = hardware_json(experiment, experiment_cluster(experiment));
  json["calibrated"] = hardware_json(experiment, calibration.cluster);
  json["compute_samples"] = calibration.compute_samples;
  json["message_samples"] = calibration.message_samples;
  json["update_samples"] = calibration.update_samples;
  json["host_copy_samples"] = calibration.host_copy_samples;
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (size_t k = 0; k < calibration.microbatches.size(); ++k)
    runs.push_back({{"microbatches", calibration.microbatches[k]},
                    {"measured_step_ms", calibration.measured_step_s[k] * 1e3},
                    {"predicted_step_ms_base", calibration.base_step_s[k] * 1e3},
                    {"predicted_step_ms_calibrated", calibration.calibrated_step_s[k] * 1e3}});
  json["runs"] = runs;
  if (!written.empty()) json["written"] = written;
  out << json.dump(2) << "\n";
  return kExitOk;
}

}  // namespace pipelab
