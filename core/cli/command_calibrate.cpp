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
          {"link_bandwidth_gb_s", profile.link_bandwidth / 1e9},
          {"link_latency_us", profile.link_latency_s * 1e6}};
}

}  // namespace

int command_calibrate(const std::vector<std::string>& args, std::ostream& out) {
  const ParsedArgs parsed = parse_args(
      "calibrate", args, {{"config"}, {"set", true, true}, {"steps"}, {"backend"}, {"write"}});
  if (!parsed.has("config")) throw UsageError("calibrate needs --config FILE (see examples/)");
  const int steps = parsed.get_int("steps", 5, 1, 1000);
  ParsedArgs with_backend = parsed;
  if (parsed.has("backend"))
    with_backend.values["set"].push_back("backend.type=" + parsed.get("backend"));
  Experiment experiment = experiment_from_args(with_backend);
  if (experiment.simulation.profile == "unit") experiment.simulation.profile = "cpu-core";

  if (parsed.has("write")) check_device_file_path(parsed.get("write"));
  CalibrationResult calibration = calibrate_measured_profile(experiment, steps);
  std::vector<std::string> written;
  if (parsed.has("write")) {
    const std::string device_path = parsed.get("write");
    calibration.cluster.device.name =
        calibration.cluster.device.name + ", measured on this machine";
    calibration.cluster.device.sources["achieved"] =
        "Measured by pipelab-cli calibrate from " + std::to_string(steps) + " steps of " +
        experiment.name + ": the GEMM rate and op_overhead_us fitted to " +
        std::to_string(calibration.compute_samples) +
        " compute ops; the memory figures are the base device's.";
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
  json["measured_steps"] = steps;
  json["base"] = hardware_json(experiment, experiment_cluster(experiment));
  json["calibrated"] = hardware_json(experiment, calibration.cluster);
  json["compute_samples"] = calibration.compute_samples;
  json["message_samples"] = calibration.message_samples;
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
