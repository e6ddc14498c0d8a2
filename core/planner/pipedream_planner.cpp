#include "core/planner/pipedream_planner.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "core/io/experiment_io.h"

namespace pipelab {
namespace {

constexpr double kInfeasible = std::numeric_limits<double>::infinity();

// The search visits about layers^2 / 2 x groups^2 / 2 (stage, replicas)
// choices, a few nanoseconds each; past this it takes more than a second or two
// (GPT-3's 99 layers on 128 groups of tp 8 take 4e7, well inside).
constexpr double kMaxSearchSteps = double(1 << 29);

void check_search_size(const StageCostTable& table, int groups) {
  const double layers = table.layer_count();
  if (layers * layers / 2 * groups * groups / 2 <= kMaxSearchSteps) return;
  const int most_groups = static_cast<int>(std::sqrt(4 * kMaxSearchSteps) / layers);
  throw ExperimentError("PipeDream's planner would search too long over " +
                        std::to_string(table.layer_count()) + " layers and " +
                        std::to_string(groups) + " device groups; plan for at most " +
                        std::to_string(most_groups) +
                        " groups of parallel.tp devices, raise parallel.tp, or use "
                        "--planner dapple");
}

// The min-max dynamic program of the header: best(i, S) over suffixes
// [i, L) on exactly S groups, each stage's replicas taken from `replica_choices`.
// `term(layers, replicas, groups_from_here)` is one stage's value in the
// max; kInfeasible rules the choice out. (A template, not a std::function:
// the innermost loop calls it billions of times on large clusters.)
template <typename StageTerm>
PlannedPipeline min_max_plan(const StageCostTable& table, int groups,
                             const std::vector<int>& replica_choices, const StageTerm& term) {
  const int layers = table.layer_count();
  const auto cell = [groups](int layer, int used) {
    return static_cast<size_t>(layer) * (groups + 1) + used;
  };
  std::vector<double> best(static_cast<size_t>(layers + 1) * (groups + 1), kInfeasible);
  std::vector<int> stage_end(best.size(), -1), stage_replicas(best.size(), 0);
  best[cell(layers, 0)] = 0;
  for (int begin = layers - 1; begin >= 0; --begin)
    for (int used = 1; used <= groups; ++used) {
      double& cell_best = best[cell(begin, used)];
      for (int end = begin + 1; end <= layers; ++end)
        for (int replicas : replica_choices) {
          if (replicas > used) break;  // replica_choices is ascending
          const double rest = best[cell(end, used - replicas)];
          if (rest >= cell_best) continue;  // cannot improve, whatever this stage costs
          const double value = std::max(term({begin, end}, replicas, used), rest);
          if (value < cell_best) {
            cell_best = value;
            stage_end[cell(begin, used)] = end;
            stage_replicas[cell(begin, used)] = replicas;
          }
        }
    }

  PlannedPipeline plan;
  int used_best = 0;
  for (int used = 1; used <= groups; ++used)
    if (best[cell(0, used)] < kInfeasible &&
        (used_best == 0 || best[cell(0, used)] < best[cell(0, used_best)]))
      used_best = used;
  if (used_best == 0) return plan;
  for (int begin = 0, used = used_best; begin < layers;) {
    const int end = stage_end[cell(begin, used)];
    const int replicas = stage_replicas[cell(begin, used)];
    plan.stages.push_back({{begin, end}, replicas, 0, 0});
    begin = end;
    used -= replicas;
  }
  plan.groups = used_best;
  return plan;
}

std::vector<int> all_replica_counts(int groups) {
  std::vector<int> counts;
  for (int r = 1; r <= groups; ++r) counts.push_back(r);
  return counts;
}

// Uniform plans: one search per data-parallel degree that divides the
// step's micro-batches; the best of them (fewest groups on ties).
PlannedPipeline best_uniform_plan(
    int groups, int microbatches,
    const std::function<PlannedPipeline(const std::vector<int>&)>& search,
    const std::function<double(const PlannedPipeline&)>& objective) {
  PlannedPipeline best;
  for (int dp = 1; dp <= groups; ++dp) {
    if (microbatches % dp != 0) continue;
    PlannedPipeline plan = search({dp});
    if (!plan.found()) continue;
    if (!best.found() || objective(plan) < objective(best) ||
        (objective(plan) == objective(best) && plan.groups < best.groups))
      best = std::move(plan);
  }
  return best;
}

std::vector<LayerRange> ranges_of(const PlannedPipeline& plan) {
  std::vector<LayerRange> ranges;
  for (const PlannedStage& stage : plan.stages) ranges.push_back(stage.layers);
  return ranges;
}

std::vector<int> replicas_of(const PlannedPipeline& plan) {
  std::vector<int> replicas;
  for (const PlannedStage& stage : plan.stages) replicas.push_back(stage.replicas);
  return replicas;
}

PlannedPipeline plan_within_memory(const StageCostTable& table, int groups,
                                   int64_t memory_per_device, int microbatches, bool uniform_only) {
  check_search_size(table, groups);
  const auto time_within_memory = [&](LayerRange layers, int replicas, int groups_from_here) {
    if (pipedream_stage_bytes(table, layers, replicas, groups_from_here) > memory_per_device)
      return kInfeasible;
    return pipedream_stage_s(table, layers, replicas, microbatches);
  };
  const auto search = [&](const std::vector<int>& choices) {
    return min_max_plan(table, groups, choices, time_within_memory);
  };
  PlannedPipeline plan =
      uniform_only
          ? best_uniform_plan(groups, microbatches, search,
                              [&](const PlannedPipeline& candidate) {
                                return pipedream_evaluate(table, ranges_of(candidate),
                                                          replicas_of(candidate), microbatches)
                                    .slowest_stage_s;
                              })
          : search(all_replica_counts(groups));
  if (!plan.found()) return plan;
  return pipedream_evaluate(table, ranges_of(plan), replicas_of(plan), microbatches);
}

}  // namespace

bool PlannedPipeline::uniform() const {
  for (const PlannedStage& stage : stages)
    if (stage.replicas != stages.front().replicas) return false;
  return true;
}

double pipedream_stage_s(const StageCostTable& table, LayerRange layers, int replicas,
                         int microbatches) {
  const RangeCost& range = table.range(layers.begin, layers.end);
  const double per_replica = static_cast<double>(microbatches) / replicas;
  const double compute = per_replica * range.microbatch_s +
                         table.allreduce_s(range.gradient_bytes, replicas) + range.update_s;
  double time = compute;
  if (range.input_bytes > 0)
    time = std::max(time, per_replica * table.message_s(range.input_bytes));
  if (range.output_bytes > 0)
    time = std::max(time, per_replica * table.message_s(range.output_bytes));
  return time;
}

int64_t pipedream_stage_bytes(const StageCostTable& table, LayerRange layers, int replicas,
                              int groups_from_here) {
  const int inflight = (groups_from_here + replicas - 1) / replicas;
  return table.device_bytes(table.range(layers.begin, layers.end), inflight, inflight, replicas);
}

PlannedPipeline pipedream_evaluate(const StageCostTable& table,
                                   const std::vector<LayerRange>& layers,
                                   const std::vector<int>& replicas, int microbatches) {
  assert(layers.size() == replicas.size());
  PlannedPipeline plan;
  for (int r : replicas) plan.groups += r;
  int groups_from_here = plan.groups;
  for (size_t s = 0; s < layers.size(); ++s) {
    PlannedStage stage{layers[s], replicas[s],
                       pipedream_stage_s(table, layers[s], replicas[s], microbatches),
                       pipedream_stage_bytes(table, layers[s], replicas[s], groups_from_here)};
    groups_from_here -= replicas[s];
    plan.slowest_stage_s = std::max(plan.slowest_stage_s, stage.step_s);
    plan.peak_device_bytes = std::max(plan.peak_device_bytes, stage.device_bytes);
    plan.stages.push_back(stage);
  }
  return plan;
}

PlannedPipeline plan_pipedream(const StageCostTable& table, int groups, int64_t memory_per_device,
                               int microbatches) {
  return plan_within_memory(table, groups, memory_per_device, microbatches, false);
}

PlannedPipeline plan_pipedream_uniform(const StageCostTable& table, int groups,
                                       int64_t memory_per_device, int microbatches) {
  return plan_within_memory(table, groups, memory_per_device, microbatches, true);
}

int64_t pipedream_minimum_memory(const StageCostTable& table, int groups, int microbatches,
                                 bool uniform_only) {
  check_search_size(table, groups);
  const auto bytes = [&](LayerRange layers, int replicas, int groups_from_here) {
    return static_cast<double>(pipedream_stage_bytes(table, layers, replicas, groups_from_here));
  };
  const auto search = [&](const std::vector<int>& choices) {
    return min_max_plan(table, groups, choices, bytes);
  };
  const PlannedPipeline plan =
      uniform_only
          ? best_uniform_plan(groups, microbatches, search,
                              [&](const PlannedPipeline& candidate) {
                                return static_cast<double>(
                                    pipedream_evaluate(table, ranges_of(candidate),
                                                       replicas_of(candidate), microbatches)
                                        .peak_device_bytes);
                              })
          : search(all_replica_counts(groups));
  assert(plan.found());
  return pipedream_evaluate(table, ranges_of(plan), replicas_of(plan), microbatches)
      .peak_device_bytes;
}

}  // namespace pipelab
