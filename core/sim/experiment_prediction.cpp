#include "core/sim/experiment_prediction.h"

#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"
#include "core/schedule/lowering.h"
#include "core/sim/cluster_topology.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {

int optimizer_slots(const Experiment& experiment) {
  const OptimizerSpec& optimizer = experiment.training.optimizer;
  const bool velocity = backward_reads_newest_weights(experiment.parallel.schedule) &&
                        experiment.training.pipemare.discrepancy_correction;
  const int moments = optimizer.type == "sgd" ? (optimizer.momentum != 0.0 ? 1 : 0)
                                              : 2;  // adam, adamw: first and second moments
  return moments + (velocity ? 1 : 0);
}

DeviceProfile cluster_device(const Experiment& experiment, const ClusterSpec& cluster) {
  DeviceProfile device = device_profile(cluster.device, cluster.node);
  // Mixed precision runs its GEMMs in bf16 (tensor cores on a GPU).
  if (experiment.training.precision == Precision::Bf16Mixed) device.flops_per_s = device.bf16_flops_per_s;
  return device;
}

DeviceProfile experiment_device(const Experiment& experiment) {
  return cluster_device(experiment, experiment_cluster(experiment));
}

CostModel cluster_cost_model(const Experiment& experiment, const ClusterSpec& cluster,
                             const std::vector<StageProfile>& profiles) {
  CostModel cost = CostModel::from_profiles(profiles, cluster_device(experiment, cluster),
                                            optimizer_slots(experiment));
  cost.set_topology(place_devices(experiment.parallel.layout(), cluster.node,
                                  experiment.parallel.sequence_parallel));
  return cost;
}

CostModel experiment_cost_model(const Experiment& experiment,
                                const std::vector<StageProfile>& profiles) {
  if (experiment.simulation.profile == "unit") return CostModel::unit(experiment.simulation.unit);
  return cluster_cost_model(experiment, experiment_cluster(experiment), profiles);
}

Prediction predict_experiment(const Experiment& experiment, std::optional<UnitCosts> unit_override,
                              int steps, const SimulationOptions& options) {
  Prediction prediction;
  prediction.profiles =
      profile_stages(experiment.model, experiment.parallel, microbatch_size(experiment),
                     experiment.training.precision, experiment.training.fp32_gradients);
  prediction.schedule =
      build_schedule(experiment.parallel, prediction.profiles, steps, options.first_replica_only);
  prediction.cost = unit_override ? CostModel::unit(*unit_override)
                                  : experiment_cost_model(experiment, prediction.profiles);
  prediction.result = simulate(prediction.schedule, prediction.cost,
                               experiment_simulation_options(experiment, options));
  return prediction;
}

SimulationOptions experiment_simulation_options(const Experiment& experiment,
                                                SimulationOptions options) {
  options.overlap_gradient_reduction = experiment.simulation.overlap_grad_reduce;
  return options;
}

}  // namespace pipelab
