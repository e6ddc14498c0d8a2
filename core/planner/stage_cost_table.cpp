#include "core/planner/stage_cost_table.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "core/io/experiment_io.h"
#include "core/plan/stage_profile.h"
#include "core/planner/planning_costs.h"
#include "core/sim/runtime_memory.h"

namespace pipelab {
namespace {

// Every range is profiled on its own (O(layers) each), so the table costs
// O(layers^3); past this many layers that takes more than seconds.
constexpr int kMaxPlannedLayers = 400;

// The profile of layers [begin, end) as a stage: a split whose stage starts
// are `begin` and `end` (where they are inside the model), so tensor-parallel
// pairs form inside the range exactly as they would in a real plan.
StageProfile profile_range(const Experiment& experiment, int begin, int end) {
  const int layers = static_cast<int>(experiment.model.layers.size());
  ParallelPlan plan = experiment.parallel;
  plan.schedule = ScheduleKind::OneFOneB;  // one chunk per device, looped placement
  plan.chunks = 1;
  plan.partition = PartitionRule::Explicit;
  plan.boundaries.clear();
  if (begin > 0) plan.boundaries.push_back(begin);
  if (end < layers) plan.boundaries.push_back(end);
  plan.pp = static_cast<int>(plan.boundaries.size()) + 1;
  const std::vector<StageProfile> stages =
      profile_stages(experiment.model, plan, microbatch_size(experiment),
                     experiment.training.precision, experiment.training.fp32_gradients);
  return stages[begin > 0 ? 1 : 0];
}

}  // namespace

StageCostTable::StageCostTable(const Experiment& experiment, std::optional<double> link_bandwidth)
    : layer_count_(static_cast<int>(experiment.model.layers.size())),
      recompute_(experiment.parallel.recompute),
      tp_(experiment.parallel.tp),
      cp_(experiment.parallel.cp) {
  if (layer_count_ > kMaxPlannedLayers)
    throw ExperimentError("the model has " + std::to_string(layer_count_) +
                          " layers; the planners search every "
                          "layer range and take at most " +
                          std::to_string(kMaxPlannedLayers) +
                          " (use repeat to merge layers into fewer, larger ones)");

  std::vector<StageProfile> profiles;
  std::vector<int> profile_of(static_cast<size_t>(layer_count_ + 1) * (layer_count_ + 1), -1);
  for (int begin = 0; begin < layer_count_; ++begin)
    for (int end = begin + 1; end <= layer_count_; ++end) {
      profile_of[index(begin, end)] = static_cast<int>(profiles.size());
      profiles.push_back(profile_range(experiment, begin, end));
    }

  cost_ = planning_cost_model(experiment, profiles, link_bandwidth);

  const int tp = experiment.parallel.tp;
  ranges_.resize(profile_of.size());
  for (size_t i = 0; i < profile_of.size(); ++i) {
    const int stage = profile_of[i];
    if (stage < 0) continue;
    const StageProfile& profile = profiles[stage];
    RangeCost& range = ranges_[i];
    range.microbatch_s = stage_microbatch_s(cost_, stage, tp, recompute_);
    range.update_s = cost_.duration(stage_op(OpKind::Update, stage));
    range.gradient_bytes = profile.gradient_bytes();
    range.input_bytes = profile.layers.begin > 0 ? profile.input_bytes : 0;
    range.output_bytes = profile.layers.end < layer_count_ ? profile.output_bytes : 0;
    range.memory = stage_memory(cost_, stage);
  }
}

const RangeCost& StageCostTable::range(int begin, int end) const {
  assert(0 <= begin && begin < end && end <= layer_count_);
  return ranges_[index(begin, end)];
}

double StageCostTable::message_s(int64_t bytes) const {
  return cost_.duration(stage_op(OpKind::SendActivation, 0, bytes));
}

double StageCostTable::allreduce_s(int64_t bytes, int members) const {
  return cost_.collective_duration(stage_op(OpKind::AllReduce, 0, bytes), members);
}

int64_t StageCostTable::device_bytes(const RangeCost& range, int inflight, int weight_versions,
                                     int replicas) const {
  const StageMemory& memory = range.memory;
  // Under recomputation a micro-batch in flight keeps only its checkpoints;
  // one at a time gets the rest back for its backward.
  const int64_t activations =
      recompute_ ? inflight * memory.kept_input + memory.recomputed : inflight * memory.activations;
  // A stage with a neighbour is in a pipeline: its sends hold a communicator.
  const bool pipelined = range.input_bytes > 0 || range.output_bytes > 0;
  const int64_t runtime =
      cost_.is_unit()
          ? 0
          : runtime_memory_bytes(cost_.device(),
                                 device_communicators(tp_, cp_, pipelined ? 2 : 1, replicas, 1));
  return runtime + memory.weights * weight_versions + memory.gradients + memory.optimizer_state +
         activations + memory.backward_working;
}

}  // namespace pipelab
