#include "core/plan/partition.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

// "pp = 8" or "pp x chunks = 8", the way the user wrote the stage count.
std::string stage_count_text(const ParallelPlan& plan) {
  if (plan.chunks > 1)
    return "pp x chunks = " + std::to_string(plan.stages()) + " (pp = " + std::to_string(plan.pp) +
           ", chunks = " + std::to_string(plan.chunks) + ")";
  return "pp = " + std::to_string(plan.pp);
}

void check_stage_count(const ParallelPlan& plan, int layer_count) {
  if (plan.pp < 1) throw std::invalid_argument("parallel.pp must be >= 1, got " + std::to_string(plan.pp));
  if (plan.chunks < 1)
    throw std::invalid_argument("parallel.chunks must be >= 1, got " + std::to_string(plan.chunks));
  if (plan.stages() > layer_count) {
    const std::string limit = plan.chunks > 1 ? "pp x chunks" : "pp";
    throw std::invalid_argument(stage_count_text(plan) + " but the model has " +
                                std::to_string(layer_count) + " splittable layer" + (layer_count == 1 ? "" : "s") +
                                "; use " + limit +
                                " <= " + std::to_string(layer_count) + " or add layers");
  }
}

// The min-max search below visits about stages x (layers - stages)^2 / 2
// candidate splits and keeps stages x layers scores. Past these a search
// takes more than seconds or hundreds of MB; models of up to 1,000 layers never
// reach them, whatever the stage count.
constexpr double kMaxSearchSteps = double(1 << 30);
constexpr double kMaxSearchCells = double(1 << 22);

void check_search_size(const ParallelPlan& plan, int layer_count) {
  const double stages = plan.stages();
  const double free_layers = layer_count - stages + 1;
  const double steps = stages * free_layers * free_layers / 2;
  const double cells = (stages + 1) * (layer_count + 1.0);
  if (steps > kMaxSearchSteps || cells > kMaxSearchCells)
    throw std::invalid_argument("parallel.partition = " + std::string(partition_name(plan.partition)) +
                                " would search too long for the best split of " + std::to_string(layer_count) +
                                " layers into " + stage_count_text(plan) + " stages; use parallel.partition = "
                                "uniform or list the stage starts, e.g. [4, 8]");
}

// The quality of a split into contiguous stages: first the costliest stage
// (what the pipeline waits on), then, among splits with the same costliest
// stage, the sum of squared stage costs (prefers spreading the rest evenly).
struct SplitScore {
  double max_cost = 0;
  double sum_squares = 0;
};

bool nearly_equal(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max({std::abs(a), std::abs(b), 1.0});
}

bool better(const SplitScore& a, const SplitScore& b) {
  if (!nearly_equal(a.max_cost, b.max_cost)) return a.max_cost < b.max_cost;
  if (!nearly_equal(a.sum_squares, b.sum_squares)) return a.sum_squares < b.sum_squares;
  return false;
}

// Exact min-max split of `costs` into `stages` non-empty contiguous ranges by
// dynamic programming over (stage count, prefix length): O(stages * n^2).
std::vector<LayerRange> min_max_split(const std::vector<double>& costs, int stages) {
  const int n = static_cast<int>(costs.size());
  assert(stages >= 1 && stages <= n);
  std::vector<double> prefix(n + 1, 0.0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + costs[i];

  // best[k][j]: best score for layers [0, j) in k stages; start[k][j]: where
  // the k-th stage begins in that split.
  const SplitScore unreachable{std::numeric_limits<double>::infinity(), 0};
  std::vector<std::vector<SplitScore>> best(stages + 1, std::vector<SplitScore>(n + 1, unreachable));
  std::vector<std::vector<int>> start(stages + 1, std::vector<int>(n + 1, -1));
  best[0][0] = SplitScore{0, 0};
  for (int k = 1; k <= stages; ++k) {
    // The first k stages hold at least k layers and leave one per later stage.
    for (int j = k; j <= n - (stages - k); ++j) {
      for (int i = k - 1; i < j; ++i) {
        if (std::isinf(best[k - 1][i].max_cost)) continue;  // no split of [0, i) into k - 1 stages
        const double stage_cost = prefix[j] - prefix[i];
        const SplitScore candidate{std::max(best[k - 1][i].max_cost, stage_cost),
                                   best[k - 1][i].sum_squares + stage_cost * stage_cost};
        if (start[k][j] < 0 || better(candidate, best[k][j])) {
          best[k][j] = candidate;
          start[k][j] = i;
        }
      }
    }
  }

  std::vector<LayerRange> ranges(stages);
  int end = n;
  for (int k = stages; k >= 1; --k) {
    const int begin = start[k][end];
    assert(begin >= 0);
    ranges[k - 1] = LayerRange{begin, end};
    end = begin;
  }
  assert(end == 0);
  return ranges;
}

// Equal layer counts; the first (n % stages) stages take one extra layer.
std::vector<LayerRange> uniform_split(int layer_count, int stages) {
  std::vector<LayerRange> ranges(stages);
  const int base = layer_count / stages;
  const int extra = layer_count % stages;
  int begin = 0;
  for (int s = 0; s < stages; ++s) {
    const int size = base + (s < extra ? 1 : 0);
    ranges[s] = LayerRange{begin, begin + size};
    begin += size;
  }
  return ranges;
}

std::string boundaries_text(const std::vector<int>& boundaries) {
  std::string text = "[";
  for (size_t i = 0; i < boundaries.size(); ++i) text += (i ? ", " : "") + std::to_string(boundaries[i]);
  return text + "]";
}

std::vector<LayerRange> explicit_split(const ParallelPlan& plan, int layer_count) {
  const int stages = plan.stages();
  const auto& boundaries = plan.boundaries;
  const std::string field = "parallel.partition = " + boundaries_text(boundaries);
  if (static_cast<int>(boundaries.size()) != stages - 1)
    throw std::invalid_argument(field + " lists " + std::to_string(boundaries.size()) +
                                " stage starts but " + stage_count_text(plan) + " stages need " +
                                std::to_string(stages - 1) + " (parallel.boundaries: where each stage after the first begins)");
  std::vector<LayerRange> ranges(stages);
  int begin = 0;
  for (int s = 0; s + 1 < stages; ++s) {
    const int next = boundaries[s];
    if (next < 1 || next > layer_count - 1)
      throw std::invalid_argument(field + ": boundary " + std::to_string(next) +
                                  " is outside 1.." + std::to_string(layer_count - 1) +
                                  " (the model has " + std::to_string(layer_count) + " layers)");
    if (next <= begin)
      throw std::invalid_argument(field + ": boundaries must be strictly increasing (" +
                                  std::to_string(next) + " follows " + std::to_string(begin) + ")");
    ranges[s] = LayerRange{begin, next};
    begin = next;
  }
  ranges[stages - 1] = LayerRange{begin, layer_count};
  return ranges;
}

// What the Balanced rule weighs: forward plus backward FLOPs per sample.
// Tensor parallelism splits the linear layers over tp shards. (Which linears
// pair up depends on the split itself, see stage_profile.h; treating every
// linear as split keeps the cost independent of the split, so the search stays exact.)
std::vector<double> compute_costs(const ModelSpec& model, int tp) {
  std::vector<double> costs;
  for (const LayerInfo& info : describe_layers(model)) {
    double cost = info.forward_flops + info.backward_input_flops + info.backward_weight_flops;
    if (info.type == LayerType::Linear) cost /= std::max(tp, 1);
    costs.push_back(cost);
  }
  return costs;
}

std::vector<double> param_costs(const ModelSpec& model) {
  std::vector<double> costs;
  for (const LayerInfo& info : describe_layers(model)) costs.push_back(static_cast<double>(info.params));
  return costs;
}

}  // namespace

std::vector<LayerRange> partition_layers(const ModelSpec& model, const ParallelPlan& plan) {
  const int layer_count = static_cast<int>(model.layers.size());
  check_stage_count(plan, layer_count);
  if (plan.partition == PartitionRule::Balanced || plan.partition == PartitionRule::Params)
    check_search_size(plan, layer_count);
  switch (plan.partition) {
    case PartitionRule::Balanced: return min_max_split(compute_costs(model, plan.tp), plan.stages());
    case PartitionRule::Uniform: return uniform_split(layer_count, plan.stages());
    case PartitionRule::Params: return min_max_split(param_costs(model), plan.stages());
    case PartitionRule::Explicit: return explicit_split(plan, layer_count);
  }
  assert(false && "unknown partition rule");
  return {};
}

}  // namespace pipelab
