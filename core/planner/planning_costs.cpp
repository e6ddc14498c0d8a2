#include "core/planner/planning_costs.h"

#include "core/io/experiment_io.h"
#include "core/sim/experiment_prediction.h"
#include "core/schedule/lowering.h"

namespace pipelab {
Op stage_op(OpKind kind, int stage, int64_t bytes) {
  Op op;
  op.kind = kind;
  op.stage = stage;
  op.bytes = bytes;
  return op;
}

CostModel planning_cost_model(const Experiment& experiment,
                              const std::vector<StageProfile>& profiles,
                              std::optional<double> link_bandwidth) {
  if (experiment.simulation.profile == "unit")
    throw ExperimentError(
        "simulation.profile = unit counts no bytes or seconds, so there is nothing to plan "
        "with; set simulation.profile to cpu-core, h100 or h200");
  CostModel cost = experiment_cost_model(experiment, profiles);
  if (!link_bandwidth) return cost;
  DeviceProfile device = cost.device();
  device.link_bandwidth = *link_bandwidth;
  return CostModel::from_profiles(profiles, device, cost.optimizer_slots());
}

double stage_microbatch_s(const CostModel& cost, int stage, int tp, bool recompute) {
  double time = cost.duration(stage_op(OpKind::Forward, stage)) +
                cost.duration(stage_op(OpKind::Backward, stage));
  if (recompute) time += cost.duration(stage_op(OpKind::Recompute, stage));
  for (const TensorParallelAllReduce& collective : cost.stages()[stage].tp_allreduces)
    time += cost.collective_duration(
        stage_op(tensor_parallel_op_kind(collective.collective), stage, collective.bytes), tp);
  return time;
}

}  // namespace pipelab
