#include "core/runtime/trainable.h"

#include <string>

#include "core/io/experiment_io.h"

namespace pipelab {

void check_trainable(const Experiment& experiment) {
  for (size_t i = 0; i < experiment.model.layers.size(); ++i) {
    const LayerType type = experiment.model.layers[i].type;
    if (type == LayerType::Embedding || type == LayerType::TransformerBlock)
      throw ExperimentError("model.layers[" + std::to_string(i) + "] is " + layer_type_name(type) +
                            ": PipeLab predicts Transformers (pipelab-cli simulate, the app's predicted "
                            "timeline and memory) but its " + experiment.backend.type +
                            " executor does not train them yet; train an MLP, or simulate this model");
  }
  if (experiment.training.precision != Precision::Fp32)
    throw ExperimentError(std::string("training.precision = ") + precision_name(experiment.training.precision) +
                          ": the " + experiment.backend.type +
                          " executor trains in fp32 only (the simulator predicts bf16-mixed); "
                          "set training.precision = fp32 to train");
}

}  // namespace pipelab
