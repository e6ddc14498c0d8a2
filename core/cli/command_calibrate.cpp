// pipelab-cli calibrate: fit the simulator's device profile to this machine
// from a short measured CPU run, and show how the prediction moves.
#include <ostream>

#include <nlohmann/json.hpp>

#include "core/cli/cli_args.h"
#include "core/cli/cli_commands.h"
#include "core/cli/cpu_calibration.h"
#include "core/io/experiment_io.h"
#include "core/sim/experiment_prediction.h"

namespace pipelab {

Experiment experiment_from_args(const ParsedArgs& parsed);  // command_simulate.cpp

namespace {

nlohmann::ordered_json profile_json(const DeviceProfile& profile) {
  return {{"name", profile.name},
          {"flops_per_s", profile.flops_per_s},
          {"memory_bandwidth", profile.memory_bandwidth},
          {"link_bandwidth", profile.link_bandwidth},
          {"link_latency_s", profile.link_latency_s}};
}

}  // namespace

int command_calibrate(const std::vector<std::string>& args, std::ostream& out) {
  const ParsedArgs parsed = parse_args("calibrate", args, {{"config"}, {"set", true, true}, {"steps"}});
  if (!parsed.has("config")) throw UsageError("calibrate needs --config FILE (see examples/)");
  const int steps = parsed.get_int("steps", 5, 1, 1000);
  Experiment experiment = experiment_from_args(parsed);
  if (experiment.simulation.profile == "unit") experiment.simulation.profile = "cpu-core";

  const Prediction before = predict_experiment(experiment);
  const CalibrationResult calibration = calibrate_cpu_profile(experiment, steps);
  const CostModel calibrated = CostModel::from_profiles(
      before.profiles, calibration.profile, optimizer_slots(experiment));
  const SimulationResult after = simulate(before.schedule, calibrated);

  nlohmann::ordered_json json;
  json["name"] = experiment.name;
  json["measured_steps"] = steps;
  json["base_profile"] = profile_json(before.cost.device());
  json["calibrated_profile"] = profile_json(calibration.profile);
  json["compute_samples"] = calibration.compute_samples;
  json["message_samples"] = calibration.message_samples;
  json["predicted_step_ms_base"] = before.result.makespan * 1e3 / before.schedule.steps;
  json["predicted_step_ms_calibrated"] = after.makespan * 1e3 / before.schedule.steps;
  json["bubble_fraction_base"] = before.result.bubble_fraction;
  json["bubble_fraction_calibrated"] = after.bubble_fraction;
  out << json.dump(2) << "\n";
  return kExitOk;
}

}  // namespace pipelab
