// pipelab-cli plan: choose a split for a cluster (PipeDream's or DAPPLE's
// planner) and print it, or write it as an experiment.
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/cli/cli_args.h"
#include "core/cli/cli_commands.h"
#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"
#include "core/planner/plan_proposal.h"
#include "core/text/byte_size.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {

Experiment experiment_from_args(const ParsedArgs& parsed);  // command_simulate.cpp

namespace {

namespace fs = std::filesystem;

constexpr int kMaxPlannedDevices = 1 << 20;

int64_t byte_size_option(const ParsedArgs& parsed, const std::string& name, const char* example) {
  const std::string text = parsed.get(name);
  const std::optional<int64_t> bytes = parse_byte_size(text);
  if (!bytes || *bytes == 0)
    throw UsageError("--" + name + " " + quoted_excerpt(text) +
                     " is not a size above 0; write e.g. " + example);
  return *bytes;
}

PlanRequest request_from_args(const ParsedArgs& parsed, const Experiment& experiment) {
  PlanRequest request;
  if (parsed.has("planner")) {
    const std::optional<PlannerKind> planner = parse_planner(parsed.get("planner"));
    if (!planner)
      throw UsageError("--planner " + quoted_excerpt(parsed.get("planner")) +
                       " is not a planner; valid: dapple, pipedream");
    request.planner = *planner;
  }
  if (!parsed.has("devices"))
    throw UsageError(
        "plan needs --devices N, the number of devices to plan for (e.g. --devices 8)");
  request.devices = parsed.get_int("devices", 0, 1, kMaxPlannedDevices);
  if (parsed.has("memory-per-device")) {
    request.memory_per_device = byte_size_option(parsed, "memory-per-device", "16GiB or 80GB");
  } else {
    const std::optional<DeviceProfile> device = find_device_profile(experiment.simulation.profile);
    if (!device)
      throw UsageError(
          "plan needs --memory-per-device BYTES (e.g. 16GiB) or a device profile that has a memory "
          "size");
    request.memory_per_device = device->memory_bytes;
  }
  if (parsed.has("bandwidth"))
    request.link_bandwidth = byte_size_option(parsed, "bandwidth", "450GB (per second)");
  return request;
}

// A relative data path names its file from the experiment's folder; keep it
// naming the same file from the folder the plan is written to.
void rebase_data_path(Experiment& experiment, const std::string& written_to) {
  DataSpec& data = experiment.data;
  if (data.path.empty() || fs::path(data.path).is_absolute() || data.resolved_path.empty()) return;
  std::error_code ignored;
  const fs::path folder = fs::absolute(fs::path(written_to), ignored).parent_path();
  const fs::path relative = fs::path(data.resolved_path).lexically_relative(folder);
  if (!relative.empty()) data.path = relative.generic_string();
}

std::string layers_text(LayerRange layers) {
  return layers.end - layers.begin == 1
             ? std::to_string(layers.begin)
             : std::to_string(layers.begin) + "-" + std::to_string(layers.end - 1);
}

// "1 stage", "3 stages", "1 micro-batch", "8 micro-batches".
std::string counted(size_t count, const std::string& noun) {
  if (count == 1) return "1 " + noun;
  return std::to_string(count) + " " + noun + (noun.back() == 'h' ? "es" : "s");
}

void print_text(const PlanProposal& proposal, const PlanRequest& request, std::ostream& out) {
  const ParallelPlan& plan = proposal.experiment.parallel;
  out << "planner: " << planner_name(proposal.planner) << ", " << request.devices << " devices, "
      << byte_size_text(request.memory_per_device) << " each\n";
  out << "optimum: " << counted(proposal.optimum.stages.size(), "stage") << " on "
      << counted(proposal.optimum.groups * plan.tp, "device") << ", slowest stage "
      << milliseconds_text(proposal.optimum.slowest_stage_s) << " a step\n";
  out << "  stage  layers      replicas  step         memory per device\n";
  for (size_t s = 0; s < proposal.optimum.stages.size(); ++s) {
    const PlannedStage& stage = proposal.optimum.stages[s];
    char line[160];
    std::snprintf(line, sizeof line, "  %-5zu  %-10s  %-8d  %-11s  %s\n", s,
                  layers_text(stage.layers).c_str(), stage.replicas,
                  milliseconds_text(stage.step_s).c_str(),
                  byte_size_text(stage.device_bytes).c_str());
    out << line;
  }
  out << "plan: dp " << plan.dp << " x tp " << plan.tp << " x pp " << plan.pp << ", "
      << counted(plan.microbatches, "micro-batch") << ", " << schedule_name(plan.schedule)
      << ", partition "
      << (plan.partition == PartitionRule::Explicit ? "at layers" : partition_name(plan.partition));
  for (int boundary : plan.boundaries) out << " " << boundary;
  out << "\npredicted step: " << milliseconds_text(proposal.predicted_step_s)
      << " (simulated)\npeak memory per device:";
  for (int64_t bytes : proposal.stage_peak_bytes) out << " " << byte_size_text(bytes);
  out << " (simulated, per stage)\n";
  if (!proposal.note.empty()) out << "note: " << proposal.note << "\n";
}

nlohmann::ordered_json plan_json(const PlanProposal& proposal, const PlanRequest& request) {
  const ParallelPlan& plan = proposal.experiment.parallel;
  nlohmann::ordered_json json;
  json["planner"] = planner_name(proposal.planner);
  json["devices"] = request.devices;
  json["memory_per_device"] = request.memory_per_device;
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const PlannedStage& stage : proposal.optimum.stages)
    stages.push_back({{"first_layer", stage.layers.begin},
                      {"last_layer", stage.layers.end - 1},
                      {"replicas", stage.replicas},
                      {"step_s", stage.step_s},
                      {"device_bytes", stage.device_bytes}});
  json["optimum"] = {{"stages", stages},
                     {"slowest_stage_s", proposal.optimum.slowest_stage_s},
                     {"devices", proposal.optimum.groups * plan.tp},
                     {"uniform", proposal.optimum.uniform()}};
  json["plan"] = {{"dp", plan.dp},
                  {"tp", plan.tp},
                  {"pp", plan.pp},
                  {"microbatches", plan.microbatches},
                  {"schedule", schedule_name(plan.schedule)},
                  {"partition", plan.partition == PartitionRule::Explicit
                                    ? nlohmann::ordered_json(plan.boundaries)
                                    : nlohmann::ordered_json(partition_name(plan.partition))}};
  json["predicted_step_s"] = proposal.predicted_step_s;
  json["peak_bytes_per_stage"] = proposal.stage_peak_bytes;
  json["note"] = proposal.note;
  if (proposal.planner == PlannerKind::Dapple)
    json["search"] = {{"candidates", proposal.candidates}, {"simulated", proposal.simulated}};
  return json;
}

}  // namespace

int command_plan(const std::vector<std::string>& args, std::ostream& out) {
  const ParsedArgs parsed = parse_args("plan", args,
                                       {{"config"},
                                        {"set", true, true},
                                        {"planner"},
                                        {"devices"},
                                        {"memory-per-device"},
                                        {"bandwidth"},
                                        {"json", false},
                                        {"write"}});
  if (!parsed.has("config"))
    throw UsageError("plan needs --config FILE, the model to plan for (see examples/)");
  const Experiment experiment = experiment_from_args(parsed);
  const PlanRequest request = request_from_args(parsed, experiment);
  PlanProposal proposal = propose_plan(experiment, request);
  if (parsed.has("write")) {
    rebase_data_path(proposal.experiment, parsed.get("write"));
    save_experiment(proposal.experiment, parsed.get("write"));
  }
  if (parsed.has("json"))
    out << plan_json(proposal, request).dump(2) << "\n";
  else
    print_text(proposal, request, out);
  return kExitOk;
}

}  // namespace pipelab
