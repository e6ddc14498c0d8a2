#include "core/runtime/trainable.h"

#include <string>

#include "core/io/experiment_io.h"

namespace pipelab {
namespace {

std::string layer_field(size_t index) { return "model.layers[" + std::to_string(index) + "]"; }

// What the executors do not train in a Transformer yet.
void check_trainable_transformer(const Experiment& experiment) {
  const ModelSpec& model = experiment.model;
  if (experiment.backend.type != "cpu" && experiment.backend.type != "cuda")
    throw ExperimentError("backend.type = " + experiment.backend.type +
                          ": Transformers train on the cpu and cuda backends; set backend.type = "
                          "cpu or cuda, or simulate this model");
  if (model.loss != LossType::CrossEntropy)
    throw ExperimentError(std::string("model.loss = ") + loss_type_name(model.loss) +
                          ": a Transformer trains on next-token cross-entropy; set model.loss = " +
                          loss_type_name(LossType::CrossEntropy));
}

// bf16-mixed trains on cuda, whose GEMMs read bf16 weight copies and inputs
// (gpu/layers/cublas_gemm.h); every other executor trains fp32.
void check_trainable_precision(const Experiment& experiment) {
  if (experiment.training.precision == Precision::Fp32 || experiment.backend.type == "cuda")
    return;
  throw ExperimentError(std::string("training.precision = ") +
                        precision_name(experiment.training.precision) + ": the " +
                        experiment.backend.type +
                        " executor trains in fp32 only (the simulator predicts bf16-mixed); "
                        "set training.precision = fp32 to train, or backend.type = cuda");
}

// Context parallelism trains dense Transformers (on cpu and cuda, the only
// executors that train a Transformer at all); the moe layers do not split
// sequences over ranks yet.
void check_trainable_context(const Experiment& experiment) {
  const int cp = experiment.parallel.cp;
  if (cp == 1) return;
  const std::string field = "parallel.cp = " + std::to_string(cp);
  const ModelSpec& model = experiment.model;
  for (size_t i = 0; i < model.layers.size(); ++i)
    if (has_experts(model.layers[i]))
      throw ExperimentError(field + ": " + layer_field(i) +
                            " routes tokens to experts, which context parallelism does not "
                            "train yet; set parallel.cp = 1, or simulate");
}

}  // namespace

void check_trainable(const Experiment& experiment) {
  const ModelSpec& model = experiment.model;
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const LayerType type = model.layers[i].type;
    const bool transformer = type == LayerType::Embedding || type == LayerType::TransformerBlock;
    if (transformer && !is_sequence_model(model))
      throw ExperimentError(layer_field(i) + " is " + layer_type_name(type) +
                            ": a Transformer starts with an embedding; make model.layers[0] an "
                            "embedding");
  }
  if (is_sequence_model(model)) check_trainable_transformer(experiment);
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const LayerType type = model.layers[i].type;
    if (is_image_layer(type) && experiment.backend.type != "cpu" && experiment.backend.type != "cuda")
      throw ExperimentError(layer_field(i) + " is " + layer_type_name(type) + ": convolutional layers and "
                            "batch norm train on the cpu and cuda backends; set backend.type = cpu or "
                            "cuda, or simulate this model");
    if (has_experts(model.layers[i]) && experiment.backend.type != "cpu" && experiment.backend.type != "cuda")
      throw ExperimentError(layer_field(i) + (type == LayerType::Moe ? " is moe" : " is a transformer_block with experts") +
                            ": Mixture-of-Experts layers train on the cpu and cuda backends; set "
                            "backend.type = cpu or cuda, or simulate this model");
  }
  check_trainable_precision(experiment);
  check_trainable_context(experiment);
  if (experiment.parallel.recompute_blocks && experiment.backend.type != "cpu")
    throw ExperimentError(
        "parallel.recompute = \"block\": the " + experiment.backend.type +
        " executor rebuilds a whole stage's activations before its backward, not one block at a "
        "time (the cpu backend does); set backend.type = cpu, or parallel.recompute = true, or "
        "simulate");
}

}  // namespace pipelab
