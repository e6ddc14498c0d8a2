#include "core/runtime/device_worker.h"

#include <stdexcept>

#include "core/text/quoted_excerpt.h"

namespace pipelab {

OptimizerSettings optimizer_settings(const OptimizerSpec& spec) {
  OptimizerSettings settings;
  const auto type = parse_optimizer_type(spec.type);
  if (!type)
    throw std::invalid_argument("training.optimizer.type = " + quoted_excerpt(spec.type) +
                                " is not an optimizer; use sgd, adam or adamw");
  settings.type = *type;
  settings.lr = spec.lr;
  settings.momentum = spec.momentum;
  settings.beta1 = spec.beta1;
  settings.beta2 = spec.beta2;
  settings.eps = spec.eps;
  settings.weight_decay = spec.weight_decay;
  return settings;
}

WorkerPlace worker_place(const Experiment& experiment, int device) {
  const DeviceCoord coord = device_coord(experiment.parallel, device);
  return {device, coord.replica, coord.pipeline_rank, coord.shard, coord.context};
}

}  // namespace pipelab
