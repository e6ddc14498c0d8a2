#include "core/sim/throughput.h"

#include <algorithm>

#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"

namespace pipelab {

double model_flops_per_step(const ModelSpec& model, int64_t batch_size) {
  double per_sample = 0;
  for (const LayerInfo& info : describe_layers(model))
    per_sample += info.forward_flops + info.backward_input_flops + info.backward_weight_flops;
  return per_sample * static_cast<double>(batch_size);
}

Throughput predicted_throughput(const Experiment& experiment, const Prediction& prediction) {
  if (experiment.simulation.profile == "unit")
    throw ExperimentError("throughput needs a device: simulation.profile = unit has no FLOP/s; name a device "
                          "such as h100");
  const ClusterSpec cluster = experiment_cluster(experiment);
  Throughput throughput;
  throughput.model_flops_per_step =
      model_flops_per_step(experiment.model, experiment.training.batch_size);
  throughput.step_seconds = prediction.result.makespan / std::max(prediction.schedule.steps, 1);
  throughput.devices = experiment.parallel.devices();
  const std::string precision = experiment.training.precision == Precision::Bf16Mixed ? "bf16" : "fp32";
  const auto peak = cluster.device.peak_flops.find(precision);
  throughput.peak_flops_per_device =
      peak != cluster.device.peak_flops.end() ? peak->second : cluster.device.peak_flops.at("fp32");
  if (throughput.step_seconds > 0 && throughput.devices > 0)
    throughput.achieved_flops_per_device =
        throughput.model_flops_per_step / throughput.step_seconds / throughput.devices;
  if (throughput.peak_flops_per_device > 0)
    throughput.mfu = throughput.achieved_flops_per_device / throughput.peak_flops_per_device;
  return throughput;
}

}  // namespace pipelab
