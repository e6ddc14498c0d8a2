// Writing an experiment as JSON: every field, in the order a reader expects
// (what it is, what it trains on, how it is split, how it runs).
#include "core/io/experiment_json.h"

namespace pipelab {
namespace {

Json layer_to_json(const LayerSpec& layer) {
  Json json;
  json["type"] = layer_type_name(layer.type);
  // Only the fields the type reads, so the saved file parses back.
  if (layer.type == LayerType::Linear) {
    json["out"] = layer.out;
    json["bias"] = layer.bias;
  }
  if (layer.type == LayerType::Dropout) json["p"] = layer.p;
  if (layer.type == LayerType::Embedding) {
    json["vocab"] = layer.vocab;
    json["dim"] = layer.dim;
    if (layer.position != PositionEncoding::Learned) json["position"] = position_encoding_name(layer.position);
    if (layer.rope_theta != kDefaultRopeTheta) json["rope_theta"] = layer.rope_theta;
  }
  if (layer.type == LayerType::TransformerBlock) {
    json["heads"] = layer.heads;
    if (layer.kv_heads > 0) json["kv_heads"] = layer.kv_heads;
    json["ffn"] = layer.ffn;
    json["causal"] = layer.causal;
    json["norm"] = norm_type_name(layer.norm);
    json["activation"] = block_activation_name(layer.activation);
    json["dropout"] = layer.dropout;
    json["bias"] = layer.bias;
  }
  if (has_experts(layer)) {
    json["experts"] = layer.experts;
    json["top_k"] = layer.top_k;
    if (layer.type == LayerType::Moe) json["ffn"] = layer.ffn;  // a block's is written above
    json["capacity_factor"] = layer.capacity_factor;
    json["aux_loss_weight"] = layer.aux_loss_weight;
  }
  if (layer.type == LayerType::Conv2d) {
    json["out"] = layer.out;
    json["bias"] = layer.bias;
  }
  if (layer.type == LayerType::Conv2d || layer.type == LayerType::MaxPool || layer.type == LayerType::AvgPool) {
    json["kernel"] = layer.kernel;
    json["stride"] = layer.stride;
    json["padding"] = layer.padding;
  }
  if (layer.type == LayerType::BatchNorm) {
    json["sync"] = layer.sync;
    json["momentum"] = layer.momentum;
    json["eps"] = layer.eps;
  }
  if (layer.type == LayerType::ResidualBlock) {
    json["out"] = layer.out;
    json["stride"] = layer.stride;
    json["sync"] = layer.sync;
  }
  return json;
}

Json model_to_json(const ModelSpec& model) {
  Json json;
  json["input"] = model.input;
  json["layers"] = Json::array();
  // Runs of identical entries are written once with "repeat": the same model,
  // and a 96-block file stays short.
  for (size_t i = 0; i < model.layers.size();) {
    size_t run = 1;
    while (i + run < model.layers.size() && model.layers[i + run] == model.layers[i]) ++run;
    Json layer = layer_to_json(model.layers[i]);
    if (run > 1) layer["repeat"] = run;
    json["layers"].push_back(layer);
    i += run;
  }
  json["loss"] = loss_type_name(model.loss);
  return json;
}

Json data_to_json(const DataSpec& data) {
  Json json;
  json["source"] = data.source;
  json["path"] = data.path;  // as written; resolved_path is recomputed on load
  json["validation_fraction"] = data.validation_fraction;
  json["samples"] = data.samples;
  json["classes"] = data.classes;
  json["features"] = data.features;
  json["noise"] = data.noise;
  json["limit"] = data.limit;
  json["vocab"] = data.vocab;
  json["stride"] = data.stride;
  return json;
}

Json training_to_json(const TrainingSpec& training) {
  const OptimizerSpec& optimizer = training.optimizer;
  Json optimizer_json;
  optimizer_json["type"] = optimizer.type;
  optimizer_json["lr"] = optimizer.lr;
  optimizer_json["momentum"] = optimizer.momentum;
  optimizer_json["beta1"] = optimizer.beta1;
  optimizer_json["beta2"] = optimizer.beta2;
  optimizer_json["eps"] = optimizer.eps;
  optimizer_json["weight_decay"] = optimizer.weight_decay;

  Json json;
  json["batch_size"] = training.batch_size;
  json["steps"] = training.steps;
  json["eval_every"] = training.eval_every;
  json["precision"] = precision_name(training.precision);
  json["fp32_gradients"] = training.fp32_gradients;
  json["optimizer"] = optimizer_json;
  const PipeMareSpec& pipemare = training.pipemare;
  json["pipemare"] = {{"lr_rescheduling", pipemare.lr_rescheduling},
                      {"lr_warmup_updates", pipemare.lr_warmup_updates},
                      {"discrepancy_correction", pipemare.discrepancy_correction},
                      {"velocity_decay", pipemare.velocity_decay}};
  return json;
}

Json parallel_to_json(const ParallelPlan& plan) {
  Json json;
  json["dp"] = plan.dp;
  json["tp"] = plan.tp;
  json["pp"] = plan.pp;
  json["microbatches"] = plan.microbatches;
  json["chunks"] = plan.chunks;
  json["schedule"] = schedule_name(plan.schedule);
  json["update"] = update_name(plan.update);
  if (plan.selective_recompute)
    json["recompute"] = "selective";
  else if (plan.recompute_blocks)
    json["recompute"] = "block";
  else
    json["recompute"] = plan.recompute;
  if (plan.recompute_layers != 1) json["recompute_layers"] = plan.recompute_layers;
  json["sequence_parallel"] = plan.sequence_parallel;
  json["offload"] = offload_name(plan.offload);
  // An explicit split is written as its stage start indices.
  if (plan.partition == PartitionRule::Explicit)
    json["partition"] = plan.boundaries;
  else
    json["partition"] = partition_name(plan.partition);
  json["staleness"] = plan.staleness;
  json["ep"] = plan.ep;
  json["zero"] = plan.zero;
  json["reshard_after_forward"] = plan.reshard_after_forward;
  json["cp"] = plan.cp;
  return json;
}

Json simulation_to_json(const SimulationSpec& simulation) {
  Json unit;
  unit["f"] = simulation.unit.f;
  unit["b"] = simulation.unit.b;
  unit["w"] = simulation.unit.w;
  unit["comm"] = simulation.unit.comm;
  unit["u"] = simulation.unit.u;
  Json json;
  json["profile"] = simulation.profile;
  Json cluster;
  cluster["node"] = simulation.cluster.node;
  cluster["nodes"] = simulation.cluster.nodes;
  json["cluster"] = cluster;
  json["overlap_grad_reduce"] = simulation.overlap_grad_reduce;
  json["unit"] = unit;
  return json;
}

Json backend_to_json(const BackendSpec& backend) {
  Json json;
  json["type"] = backend.type;
  json["threads"] = backend.threads;
  json["tf32"] = backend.tf32;
  return json;
}

}  // namespace

Json experiment_to_json_value(const Experiment& experiment) {
  Json json;
  json["name"] = experiment.name;
  json["seed"] = experiment.seed;
  json["model"] = model_to_json(experiment.model);
  json["data"] = data_to_json(experiment.data);
  json["training"] = training_to_json(experiment.training);
  json["parallel"] = parallel_to_json(experiment.parallel);
  json["simulation"] = simulation_to_json(experiment.simulation);
  json["backend"] = backend_to_json(experiment.backend);
  return json;
}

}  // namespace pipelab
