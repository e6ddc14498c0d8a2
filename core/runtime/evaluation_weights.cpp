#include "core/runtime/evaluation_weights.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

std::vector<Tensor*> evaluated_tensors(Sequential& stage) {
  std::vector<Tensor*> tensors;
  for (int k = 0; k < stage.layer_count(); ++k) {
    for (Tensor* value : stage.layer(k).params()) tensors.push_back(value);
    for (Tensor* buffer : stage.layer(k).buffers()) tensors.push_back(buffer);
  }
  return tensors;
}

}  // namespace

std::vector<float> flat_evaluation_weights(Sequential& stage) {
  std::vector<float> values;
  for (const Tensor* tensor : evaluated_tensors(stage))
    values.insert(values.end(), tensor->data(), tensor->data() + tensor->size());
  return values;
}

void set_evaluation_weights(Sequential& stage, const float* values, int64_t count) {
  const std::vector<Tensor*> tensors = evaluated_tensors(stage);
  int64_t expected = 0;
  for (const Tensor* tensor : tensors) expected += tensor->size();
  if (count != expected)
    throw std::runtime_error("evaluation weights of " + std::to_string(count) +
                             " values for a stage of " + std::to_string(expected) +
                             " (do all ranks run the same experiment?)");
  for (Tensor* tensor : tensors) {
    if (tensor->size() > 0)
      std::memcpy(tensor->data(), values, static_cast<size_t>(tensor->size()) * sizeof(float));
    values += tensor->size();
  }
}

std::unique_ptr<Sequential> stage_copy_for_evaluation(
    const Experiment& experiment, const std::vector<LayerRange>& stage_ranges,
    const std::vector<TensorParallelRole>& tp_roles, int stage, int shard, ExpertShard experts) {
  const ParallelPlan& plan = experiment.parallel;
  TensorParallelSetup tensor_parallel;
  tensor_parallel.degree = plan.tp;
  tensor_parallel.shard = shard;
  if (plan.tp > 1) {
    tensor_parallel.roles = tp_roles;
    // Never called: the copy is only read, never run.
    tensor_parallel.all_reduce = [](Tensor&, int, bool) {};
    tensor_parallel.sequence_parallel = plan.sequence_parallel;
    tensor_parallel.sequence_collective = [](TensorParallelCollective, Tensor&, int, bool) {};
  }
  const LayerRange& range = stage_ranges[static_cast<size_t>(stage)];
  return std::make_unique<Sequential>(experiment.model, range.begin, range.end, experiment.seed,
                                      nullptr, std::move(tensor_parallel), plan.selective_recompute,
                                      experts);
}

}  // namespace pipelab
