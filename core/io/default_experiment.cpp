// The experiment the app opens with: small enough to train in seconds on a
// CPU, pipelined enough to show a schedule.
#include "core/io/experiment_io.h"

namespace pipelab {

Experiment default_experiment() {
  Experiment experiment;
  experiment.name = "Spiral MLP on a 2-stage 1F1B pipeline";
  experiment.seed = 1;

  // 2 -> 256 -> 256 -> 256 -> 3: three hidden layers bend the spiral's arms
  // apart, and wide enough that each op's compute (not the executor's per-op
  // bookkeeping) is what the measured timeline shows.
  experiment.model.input = {2};
  const auto linear = [](int64_t out) { return LayerSpec{LayerType::Linear, out, true, 0.0}; };
  const LayerSpec relu{LayerType::Relu, 0, true, 0.0};
  experiment.model.layers = {linear(256), relu, linear(256), relu, linear(256), relu, linear(3)};
  experiment.model.loss = LossType::CrossEntropy;

  experiment.data.source = "spiral";
  experiment.data.samples = 2048;
  experiment.data.classes = 3;
  experiment.data.noise = 0.1;
  experiment.data.validation_fraction = 0.2;

  experiment.training.batch_size = 256;
  experiment.training.steps = 300;
  experiment.training.eval_every = 50;
  experiment.training.optimizer.type = "adam";
  experiment.training.optimizer.lr = 0.01;

  experiment.parallel.pp = 2;
  experiment.parallel.microbatches = 4;
  experiment.parallel.schedule = ScheduleKind::OneFOneB;
  experiment.parallel.partition = PartitionRule::Balanced;

  experiment.simulation.profile = "cpu-core";
  experiment.backend.type = "cpu";
  return experiment;
}

}  // namespace pipelab
