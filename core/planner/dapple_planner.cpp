#include "core/planner/dapple_planner.h"

#include <algorithm>
#include <limits>

#include "core/io/experiment_io.h"
#include "core/io/experiment_prediction.h"
#include "core/plan/stage_profile.h"
#include "core/planner/stage_cost_table.h"
#include "core/schedule/lowering.h"

namespace pipelab {
namespace {

// A (pp, dp, m) not yet simulated, with what it cannot beat.
struct Pending {
  int dp = 1;
  int pp = 1;
  int microbatches = 1;
  double step_bound_s = 0;
  int64_t memory_bound = 0;
};

// Faster first; fewer devices, then fewer micro-batches, on ties.
bool better(const DappleCandidate& a, const DappleCandidate& b) {
  if (a.step_s != b.step_s) return a.step_s < b.step_s;
  if (a.dp * a.pp != b.dp * b.pp) return a.dp * a.pp < b.dp * b.pp;
  return a.microbatches < b.microbatches;
}

}  // namespace

Experiment dapple_experiment(const Experiment& experiment, int dp, int pp, int microbatches) {
  Experiment candidate = experiment;
  ParallelPlan& plan = candidate.parallel;
  plan.dp = dp;
  plan.pp = pp;
  plan.microbatches = microbatches;
  plan.schedule = ScheduleKind::OneFOneB;
  plan.update = UpdateMode::Sync;
  plan.chunks = 1;
  plan.partition = PartitionRule::Balanced;
  plan.boundaries.clear();
  return candidate;
}

DappleCandidate simulate_candidate(const Experiment& experiment, std::optional<double> link_bandwidth) {
  const ParallelPlan& plan = experiment.parallel;
  const std::vector<StageProfile> profiles =
      profile_stages(experiment.model, plan, microbatch_size(experiment), experiment.training.precision);
  const Schedule schedule = build_schedule(plan, profiles);
  CostModel cost = experiment_cost_model(experiment, profiles);
  if (link_bandwidth) {
    DeviceProfile device = cost.device();
    device.link_bandwidth = *link_bandwidth;
    cost = CostModel::from_profiles(profiles, device, cost.optimizer_slots());
  }
  SimulationOptions metrics_only;
  metrics_only.record_events = metrics_only.record_memory = false;
  const SimulationResult result = simulate(schedule, cost, metrics_only);

  DappleCandidate candidate;
  candidate.dp = plan.dp;
  candidate.pp = plan.pp;
  candidate.microbatches = plan.microbatches;
  for (const StageProfile& profile : profiles) candidate.split.push_back(profile.layers);
  candidate.step_s = result.makespan / schedule.steps;
  candidate.stage_peak_bytes.assign(plan.stages(), 0);
  for (const DeviceSimStats& device : result.per_device) {
    const int stage = device_coord(plan, device.device).pipeline_rank;
    candidate.stage_peak_bytes[stage] = std::max(candidate.stage_peak_bytes[stage], device.peak_total_bytes);
    candidate.peak_device_bytes = std::max(candidate.peak_device_bytes, device.peak_total_bytes);
  }
  return candidate;
}

DapplePlan plan_dapple(const Experiment& experiment, int devices, int64_t memory_per_device,
                       std::optional<double> link_bandwidth) {
  const StageCostTable table(experiment, link_bandwidth);
  const int groups = devices / experiment.parallel.tp;
  const int64_t batch = experiment.training.batch_size;

  DapplePlan plan;
  std::vector<Pending> pending;
  for (int pp = 1; pp <= std::min(groups, table.layer_count()); ++pp) {
    const std::vector<LayerRange> split = partition_layers(experiment.model, dapple_experiment(experiment, 1, pp, 1).parallel);
    for (int dp = 1; dp * pp <= groups; ++dp) {
      if (batch % dp != 0) continue;
      for (int m = 1; m <= batch / dp; ++m) {
        if ((batch / dp) % m != 0) continue;
        const Experiment candidate = dapple_experiment(experiment, dp, pp, m);
        if (!validate_experiment(candidate).empty()) continue;
        // Costs per micro-batch scale with its size; the table holds the experiment's own.
        const double scale = static_cast<double>(microbatch_size(candidate)) / microbatch_size(experiment);
        Pending entry{dp, pp, m, 0, 0};
        for (const LayerRange& range : split) {
          const RangeCost& cost = table.range(range.begin, range.end);
          entry.step_bound_s = std::max(entry.step_bound_s, m * scale * cost.microbatch_s);
          entry.memory_bound = std::max(entry.memory_bound, cost.memory.weights + cost.memory.gradients +
                                                                cost.memory.optimizer_state);
        }
        pending.push_back(entry);
      }
    }
  }
  plan.candidates = static_cast<int>(pending.size());
  if (pending.empty())
    throw ExperimentError("no (pp, dp, micro-batch) split of training.batch_size = " + std::to_string(batch) +
                          " over " + std::to_string(devices) + " devices passes validation; change the batch size");

  std::sort(pending.begin(), pending.end(),
            [](const Pending& a, const Pending& b) { return a.step_bound_s < b.step_bound_s; });
  for (const Pending& entry : pending) {
    if (plan.best && entry.step_bound_s > plan.best->step_s) break;
    if (entry.memory_bound > memory_per_device) continue;
    DappleCandidate candidate =
        simulate_candidate(dapple_experiment(experiment, entry.dp, entry.pp, entry.microbatches), link_bandwidth);
    ++plan.simulated;
    if (candidate.peak_device_bytes > memory_per_device) continue;
    if (!plan.best || better(candidate, *plan.best)) plan.best = std::move(candidate);
  }
  if (plan.best) return plan;

  // Nothing fits: the smallest peak any candidate needs, simulating in the
  // order of the memory bound until the bound passes the best peak found.
  std::sort(pending.begin(), pending.end(),
            [](const Pending& a, const Pending& b) { return a.memory_bound < b.memory_bound; });
  plan.smallest_memory = std::numeric_limits<int64_t>::max();
  for (const Pending& entry : pending) {
    if (entry.memory_bound >= plan.smallest_memory) break;
    const DappleCandidate candidate =
        simulate_candidate(dapple_experiment(experiment, entry.dp, entry.pp, entry.microbatches), link_bandwidth);
    ++plan.simulated;
    plan.smallest_memory = std::min(plan.smallest_memory, candidate.peak_device_bytes);
  }
  return plan;
}

}  // namespace pipelab
