// pipelab-cli plan: choose a split for a cluster (PipeDream's or DAPPLE's
// planner) and print it, or write it as an experiment.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/cli/cli_args.h"
#include "core/cli/cli_commands.h"
#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"
#include "core/planner/launch_export.h"
#include "core/planner/plan_proposal.h"
#include "core/planner/split_search.h"
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
                       " is not a planner; valid: dapple, pipedream, search");
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

// --- the search over every dimension (--planner search) ---

std::optional<LaunchTool> export_option(const ParsedArgs& parsed) {
  if (!parsed.has("export")) return std::nullopt;
  const std::optional<LaunchTool> tool = parse_launch_tool(parsed.get("export"));
  if (!tool)
    throw UsageError("--export " + quoted_excerpt(parsed.get("export")) +
                     " is not a tool; valid: megatron, torchtitan");
  return tool;
}

double margin_option(const ParsedArgs& parsed) {
  if (!parsed.has("margin")) return 0.1;
  const std::string text = parsed.get("margin");
  try {
    size_t used = 0;
    const double margin = std::stod(text, &used);
    if (used == text.size() && margin >= 0 && margin < 1) return margin;
  } catch (const std::exception&) {
  }
  throw UsageError("--margin " + quoted_excerpt(text) +
                   " must be the share of each device's memory kept free, at least 0 and below 1 "
                   "(e.g. 0.1)");
}

SearchRequest search_request(const ParsedArgs& parsed, const Experiment& experiment) {
  SearchRequest request;
  const ClusterSpec cluster = experiment_cluster(experiment);
  request.devices_per_node = cluster.node.devices_per_node;
  if (parsed.has("devices"))
    request.devices = parsed.get_int("devices", 0, 1, kMaxPlannedDevices);
  else if (experiment.simulation.cluster.nodes > 0)
    request.devices = cluster.devices();
  else
    throw UsageError(
        "plan --planner search needs --devices N, or simulation.cluster.nodes in the experiment "
        "(every node's devices are used)");
  request.memory_per_device = parsed.has("memory-per-device")
                                  ? byte_size_option(parsed, "memory-per-device", "80GB")
                                  : static_cast<int64_t>(cluster.device.memory_bytes);
  request.memory_margin = margin_option(parsed);
  request.top = parsed.get_int("top", request.top, 1, 100);
  request.max_simulations = parsed.get_int("max-simulations", request.max_simulations, 1, 1000000);
  // A search of thousands of GPUs takes minutes: say how far it is, on a terminal only.
  if (isatty(STDERR_FILENO))
    request.on_progress = [](const SearchProgress& progress) {
      std::fprintf(stderr, "\rsearch: %lld candidates, %d of %d simulated ",
                   static_cast<long long>(progress.candidates), progress.simulated,
                   progress.max_simulations);
      return true;
    };
  if (parsed.has("space"))
    for (const std::string& assignment : parsed.values.at("space"))
      restrict_search_space(request.space, assignment);
  return request;
}

// How many candidates each reason pruned, in the order of PruneReason.
std::vector<int64_t> pruned_counts(const SearchResult& result) {
  std::vector<int64_t> counts(4, 0);
  for (const PrunedPlan& pruned : result.pruned) ++counts[static_cast<int>(pruned.reason)];
  return counts;
}

constexpr PruneReason kPruneReasons[] = {PruneReason::Invalid, PruneReason::Memory,
                                         PruneReason::Slower, PruneReason::NotSimulated};

void print_search(const SearchResult& result, const SearchRequest& request, std::ostream& out) {
  out << "search: " << request.devices << " devices (" << request.devices_per_node << " per node), "
      << byte_size_text(request.memory_per_device) << " each, "
      << byte_size_text(result.usable_bytes) << " usable (" << percent_text(request.memory_margin)
      << " kept free)\n";
  const std::vector<int64_t> counts = pruned_counts(result);
  out << "candidates: " << result.candidates << "; pruned";
  for (PruneReason reason : kPruneReasons)
    out << (reason == PruneReason::Invalid ? " " : ", ") << counts[static_cast<int>(reason)] << " "
        << prune_reason_name(reason);
  out << "; " << result.simulated << " simulated\n";
  if (result.best.empty()) {
    out << "no plan fits: every candidate was pruned (see the reasons below)\n";
  } else {
    size_t width = 5;
    for (const SearchedPlan& plan : result.best)
      width = std::max(width, split_label(plan.plan).size());
    const auto row = [&](const std::vector<std::string>& cells) {
      std::string line = "  " + cells[0];
      line.resize(5, ' ');
      line += cells[1] + std::string(width + 2 - cells[1].size(), ' ');
      for (size_t c = 2; c < cells.size(); ++c) {
        line += cells[c];
        if (c + 1 < cells.size())
          line += std::string(cells[c].size() < 11 ? 11 - cells[c].size() : 1, ' ');
      }
      out << line << "\n";
    };
    row({"#", "split", "step", "MFU", "bubble", "peak", "weights", "gradients", "optimizer",
         "activations"});
    for (size_t i = 0; i < result.best.size(); ++i) {
      const SearchedPlan& plan = result.best[i];
      const auto category = [&](MemoryCategory c) {
        return byte_size_text(plan.peak_by_category[static_cast<int>(c)]);
      };
      row({std::to_string(i + 1), split_label(plan.plan), step_time_text(plan.step_s),
           percent_text(plan.mfu), percent_text(plan.bubble), byte_size_text(plan.peak_bytes),
           category(MemoryCategory::Weights), category(MemoryCategory::Gradients),
           category(MemoryCategory::OptimizerState), category(MemoryCategory::Activations)});
    }
  }
  out << "pruned, the first of each reason:\n";
  for (PruneReason reason : kPruneReasons) {
    const auto first = std::find_if(result.pruned.begin(), result.pruned.end(),
                                    [&](const PrunedPlan& p) { return p.reason == reason; });
    if (first == result.pruned.end()) continue;
    out << "  " << prune_reason_name(reason) << ": " << split_label(first->plan) << ": "
        << first->why << "\n";
  }
}

nlohmann::ordered_json split_json(const ParallelPlan& plan) {
  return {{"tp", plan.tp},
          {"cp", plan.cp},
          {"pp", plan.pp},
          {"dp", plan.dp},
          {"ep", plan.ep},
          {"zero", plan.zero},
          {"schedule", schedule_name(plan.schedule)},
          {"chunks", plan.chunks},
          {"recompute", plan.recompute_blocks      ? "block"
                        : plan.recompute           ? "full"
                        : plan.selective_recompute ? "selective"
                                                   : "none"},
          {"sequence_parallel", plan.sequence_parallel},
          {"offload", offload_name(plan.offload)},
          {"microbatches", plan.microbatches},
          {"label", split_label(plan)}};
}

nlohmann::ordered_json search_json(const SearchResult& result, const SearchRequest& request) {
  nlohmann::ordered_json json;
  json["planner"] = "search";
  json["devices"] = request.devices;
  json["devices_per_node"] = request.devices_per_node;
  json["memory_per_device"] = request.memory_per_device;
  json["memory_margin"] = request.memory_margin;
  json["usable_bytes"] = result.usable_bytes;
  json["candidates"] = result.candidates;
  json["simulated"] = result.simulated;
  const std::vector<int64_t> counts = pruned_counts(result);
  nlohmann::ordered_json pruned_by_reason;
  for (PruneReason reason : kPruneReasons)
    pruned_by_reason[prune_reason_name(reason)] = counts[static_cast<int>(reason)];
  json["pruned_counts"] = pruned_by_reason;
  nlohmann::ordered_json plans = nlohmann::ordered_json::array();
  for (const SearchedPlan& plan : result.best) {
    nlohmann::ordered_json peaks;
    for (int c = 0; c < kMemoryCategoryCount; ++c)
      peaks[memory_category_name(static_cast<MemoryCategory>(c))] = plan.peak_by_category[c];
    plans.push_back({{"split", split_json(plan.plan)},
                     {"step_s", plan.step_s},
                     {"mfu", plan.mfu},
                     {"bubble", plan.bubble},
                     {"peak_bytes", plan.peak_bytes},
                     {"peak_bytes_by_category", peaks},
                     {"step_bound_s", plan.step_bound_s},
                     {"memory_bound_bytes", plan.memory_bound}});
  }
  json["plans"] = plans;
  nlohmann::ordered_json pruned = nlohmann::ordered_json::array();
  for (const PrunedPlan& plan : result.pruned)
    pruned.push_back({{"label", split_label(plan.plan)},
                      {"reason", prune_reason_name(plan.reason)},
                      {"why", plan.why}});
  json["pruned"] = pruned;
  return json;
}

int run_search(const ParsedArgs& parsed, const Experiment& experiment, std::ostream& out) {
  const SearchRequest request = search_request(parsed, experiment);
  const std::optional<LaunchTool> tool = export_option(parsed);
  const SearchResult result = search_splits(experiment, request);
  if (request.on_progress) std::fputs("\r\033[K", stderr);  // the progress line goes
  if (result.best.empty() && (parsed.has("write") || tool))
    throw ExperimentError("no split of the experiment fits " + byte_size_text(result.usable_bytes) +
                          " usable per device, so there is nothing to write or export; give more "
                          "devices, more memory per device or a smaller --margin");
  std::optional<Experiment> best;
  if (!result.best.empty()) best = searched_experiment(experiment, result.best.front().plan);
  if (parsed.has("write")) {
    rebase_data_path(*best, parsed.get("write"));
    save_experiment(*best, parsed.get("write"));
  }
  if (parsed.has("json")) {
    nlohmann::ordered_json json = search_json(result, request);
    if (tool) {
      const LaunchExport exported = export_launch(*best, *tool);
      json["export"] = {{"tool", launch_tool_name(*tool)},
                        {"lines", exported.lines},
                        {"unmapped", exported.unmapped}};
    }
    out << json.dump(2) << "\n";
    return kExitOk;
  }
  print_search(result, request, out);
  if (tool)
    out << "\nplan 1 for " << launch_tool_name(*tool) << ":\n"
        << launch_text(export_launch(*best, *tool), *tool);
  return kExitOk;
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
                                        {"write"},
                                        {"top"},
                                        {"margin"},
                                        {"max-simulations"},
                                        {"export"},
                                        {"space", true, true}});
  if (!parsed.has("config"))
    throw UsageError("plan needs --config FILE, the model to plan for (see examples/)");
  const Experiment experiment = experiment_from_args(parsed);
  if (parsed.has("planner") && parsed.get("planner") == "search")
    return run_search(parsed, experiment, out);
  for (const char* option : {"top", "margin", "max-simulations", "export", "space"})
    if (parsed.has(option))
      throw UsageError(std::string("--") + option + " belongs to --planner search");
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
