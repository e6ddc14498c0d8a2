#include "core/planner/plan_proposal.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>

#include "core/io/experiment_io.h"
#include "core/planner/dapple_planner.h"
#include "core/planner/stage_cost_table.h"
#include "core/text/byte_size.h"
#include "core/text/translatable.h"

namespace pipelab {
namespace {

void check_request(const Experiment& experiment, const PlanRequest& request) {
  const int tp = experiment.parallel.tp;
  const int cp = experiment.parallel.cp;
  if (request.devices < 1)
    throw ExperimentError("the plan needs at least 1 device, got " +
                          std::to_string(request.devices) +
                          "; give the number of devices to plan for");
  if (request.devices % (tp * cp) != 0) {
    const std::string group =
        cp > 1 ? "parallel.tp x parallel.cp = " + std::to_string(tp) + " x " + std::to_string(cp)
               : "parallel.tp = " + std::to_string(tp);
    throw ExperimentError(std::to_string(request.devices) + " devices is not a multiple of " +
                          group + " (each stage replica takes " + (cp > 1 ? "tp x cp" : "tp") +
                          " devices); use a multiple of " + std::to_string(tp * cp) +
                          " or change " + (cp > 1 ? "tp or cp" : "parallel.tp"));
  }
  if (request.memory_per_device < 1)
    throw ExperimentError("memory per device must be above 0 bytes, e.g. 16GiB");
  if (request.link_bandwidth &&
      !(std::isfinite(*request.link_bandwidth) && *request.link_bandwidth > 0))
    throw ExperimentError(
        "the link bandwidth must be a number of bytes per second above 0, e.g. 450GB");
}

ExperimentError too_little_memory(const std::string& what, int64_t given, int64_t smallest) {
  return ExperimentError("no " + what + " fits in " + byte_size_text(given) +
                         " per device; the smallest that works needs " + byte_size_text(smallest) +
                         " (" + std::to_string(smallest) +
                         " bytes): give at least that much memory per device, or more devices");
}

std::string replicas_text(const PlannedPipeline& plan) {
  std::string text;
  for (const PlannedStage& stage : plan.stages)
    text += (text.empty() ? "" : ", ") + std::to_string(stage.replicas);
  return text;
}

// The experiment of a uniform PipeDream plan: its stages as explicit stage
// starts, dp = the replicas, and the step's micro-batches shared over them
// so each keeps the size the plan was costed at.
Experiment pipedream_experiment(const Experiment& experiment, const PlannedPipeline& plan,
                                int microbatches) {
  Experiment runnable = experiment;
  ParallelPlan& parallel = runnable.parallel;
  parallel.dp = plan.stages.front().replicas;
  parallel.ep = std::gcd(parallel.ep, parallel.dp);  // expert-parallel groups must fit the replicas
  parallel.pp = static_cast<int>(plan.stages.size());
  parallel.microbatches = microbatches / parallel.dp;
  parallel.schedule = ScheduleKind::PipeDream;
  parallel.update = UpdateMode::Sync;
  parallel.zero = 0;  // PipeDream updates each stage on its own: no synchronous step to shard
  parallel.chunks = 1;
  parallel.partition = PartitionRule::Explicit;
  parallel.boundaries.clear();
  for (size_t s = 1; s < plan.stages.size(); ++s)
    parallel.boundaries.push_back(plan.stages[s].layers.begin);
  return runnable;
}

void fill_prediction(PlanProposal& proposal, std::optional<double> link_bandwidth) {
  const std::vector<std::string> problems = validate_experiment(proposal.experiment);
  if (!problems.empty())
    throw std::logic_error("the planned experiment does not validate: " + problems.front());
  const DappleCandidate simulated = simulate_candidate(proposal.experiment, link_bandwidth);
  proposal.predicted_step_s = simulated.step_s;
  proposal.stage_peak_bytes = simulated.stage_peak_bytes;
}

PlanProposal propose_pipedream(const Experiment& experiment, const PlanRequest& request) {
  const StageCostTable table(experiment, request.link_bandwidth);
  const int groups = request.devices / (experiment.parallel.tp * experiment.parallel.cp);
  const int microbatches =
      experiment.parallel.dp * experiment.parallel.microbatches;  // per step, all replicas
  PlanProposal proposal;
  proposal.planner = PlannerKind::PipeDream;
  proposal.optimum = plan_pipedream(table, groups, request.memory_per_device, microbatches);
  if (!proposal.optimum.found())
    throw too_little_memory("PipeDream plan", request.memory_per_device,
                            pipedream_minimum_memory(table, groups, microbatches, false));
  const PlannedPipeline uniform =
      plan_pipedream_uniform(table, groups, request.memory_per_device, microbatches);
  if (!uniform.found())
    throw too_little_memory("uniform dp x pp plan (what PipeLab runs)", request.memory_per_device,
                            pipedream_minimum_memory(table, groups, microbatches, true));
  // A uniform plan as fast as the optimum is the optimum PipeLab runs as it is.
  if (uniform.slowest_stage_s <= proposal.optimum.slowest_stage_s) proposal.optimum = uniform;
  proposal.experiment = pipedream_experiment(experiment, uniform, microbatches);
  fill_prediction(proposal, request.link_bandwidth);
  if (!proposal.optimum.uniform()) {
    const double extra = uniform.slowest_stage_s / proposal.optimum.slowest_stage_s - 1;
    char percent[32];
    std::snprintf(percent, sizeof percent, "%.1f%%", extra * 100);
    proposal.note =
        "the optimum replicates its stages unevenly (" + replicas_text(proposal.optimum) +
        " device groups); PipeLab runs uniform dp x pp, so the plan is dp " +
        std::to_string(proposal.experiment.parallel.dp) + " x pp " +
        std::to_string(proposal.experiment.parallel.pp) + ", whose slowest stage takes " +
        milliseconds_text(uniform.slowest_stage_s) + " a step, " + percent +
        " more than the optimum's " + milliseconds_text(proposal.optimum.slowest_stage_s);
  }
  // PipeDream's memory term is its paper's estimate; the simulator follows
  // the schedule op by op and may find more.
  const int64_t simulated_peak =
      *std::max_element(proposal.stage_peak_bytes.begin(), proposal.stage_peak_bytes.end());
  if (simulated_peak > request.memory_per_device)
    proposal.note += std::string(proposal.note.empty() ? "" : "; ") + "the simulator predicts " +
                     byte_size_text(simulated_peak) + " on the fullest device, above the " +
                     byte_size_text(request.memory_per_device) +
                     " given: try --planner dapple, whose plans are "
                     "checked by the simulator";
  return proposal;
}

PlanProposal propose_dapple(const Experiment& experiment, const PlanRequest& request) {
  const DapplePlan plan =
      plan_dapple(experiment, request.devices, request.memory_per_device, request.link_bandwidth);
  if (!plan.best)
    throw too_little_memory("DAPPLE plan", request.memory_per_device, plan.smallest_memory);
  const DappleCandidate& best = *plan.best;
  PlanProposal proposal;
  proposal.planner = PlannerKind::Dapple;
  for (size_t s = 0; s < best.split.size(); ++s)
    proposal.optimum.stages.push_back(
        {best.split[s], best.dp, best.step_s, best.stage_peak_bytes[s]});
  proposal.optimum.slowest_stage_s = best.step_s;
  proposal.optimum.groups = best.dp * best.pp;
  proposal.optimum.peak_device_bytes = best.peak_device_bytes;
  proposal.experiment = dapple_experiment(experiment, best);
  proposal.candidates = plan.candidates;
  proposal.simulated = plan.simulated;
  fill_prediction(proposal, request.link_bandwidth);
  if (plan.split_moves > 0)
    proposal.note =
        "the stage split moves " + std::to_string(plan.split_moves) + " boundar" +
        (plan.split_moves == 1 ? "y" : "ies") + " by one layer from the balanced split" +
        (plan.balanced_step_s > 0 ? " (which takes " + step_time_text(plan.balanced_step_s) + ")"
                                  : " (on which nothing fits)");
  return proposal;
}

}  // namespace

std::string milliseconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g ms", seconds * 1e3);
  return text;
}

std::string step_time_text(double seconds) {
  if (seconds < 1) return milliseconds_text(seconds);
  char text[32];
  std::snprintf(text, sizeof text, "%.4g s", seconds);
  return text;
}

std::string percent_text(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", share * 100);
  return text;
}

const char* planner_name(PlannerKind kind) {
  return kind == PlannerKind::Dapple ? "dapple" : "pipedream";
}

const char* planner_description(PlannerKind kind) {
  return kind == PlannerKind::Dapple
             ? PIPELAB_TRANSLATABLE(
                   "core",
                   "DAPPLE: tries every pp, dp and micro-batch count on "
                   "synchronous 1F1B, each simulated, then chooses the stage split; "
                   "its plan runs as predicted")
             : PIPELAB_TRANSLATABLE("core",
                                    "PipeDream: a dynamic program over stages and per-stage "
                                    "replicas (asynchronous); runs the closest uniform dp x pp "
                                    "when its optimum is not uniform");
}

std::optional<PlannerKind> parse_planner(const std::string& name) {
  if (name == "dapple") return PlannerKind::Dapple;
  if (name == "pipedream") return PlannerKind::PipeDream;
  return std::nullopt;
}

PlanProposal propose_plan(const Experiment& experiment, const PlanRequest& request) {
  check_request(experiment, request);
  return request.planner == PlannerKind::Dapple ? propose_dapple(experiment, request)
                                                : propose_pipedream(experiment, request);
}

}  // namespace pipelab
