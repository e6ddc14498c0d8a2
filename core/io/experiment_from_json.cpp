// Reading an experiment from its JSON form. Each section has one reader that
// lists the keys it accepts; anything else is an error naming the key.
#include <string>
#include <vector>

#include "core/io/data_sources.h"
#include "core/io/experiment_json.h"
#include "core/model/model_limits.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {
namespace {

std::vector<std::string> partition_rule_names() { return {"balanced", "uniform", "params", "explicit"}; }

LayerSpec read_layer(const Json& value, int index) {
  const std::string path = "model.layers[" + std::to_string(index) + "]";
  if (!value.is_object())
    throw ExperimentError(path + " must be an object like {\"type\": \"relu\"}, got " + json_value_text(value));
  auto type_value = value.find("type");
  if (type_value == value.end())
    throw ExperimentError(path + " needs a \"type\"; valid: " + join_names(layer_type_names()));

  LayerSpec layer;
  layer.type = json_to_name<LayerType>(*type_value, path + ".type", "a layer type", parse_layer_type,
                                       layer_type_names());
  // Only the fields that mean something for this type are accepted.
  std::vector<std::string> keys = {"type", "repeat"};
  if (layer.type == LayerType::Linear) keys.insert(keys.end(), {"out", "bias"});
  if (layer.type == LayerType::Dropout) keys.push_back("p");
  if (layer.type == LayerType::Embedding)
    keys.insert(keys.end(), {"vocab", "dim", "position", "rope_theta"});
  if (layer.type == LayerType::TransformerBlock)
    keys.insert(keys.end(), {"heads", "kv_heads", "ffn", "causal", "norm", "activation", "dropout", "bias",
                             "experts", "top_k", "capacity_factor", "aux_loss_weight"});
  if (layer.type == LayerType::Conv2d) keys.insert(keys.end(), {"out", "kernel", "stride", "padding", "bias"});
  const bool pool = layer.type == LayerType::MaxPool || layer.type == LayerType::AvgPool;
  if (pool) keys.insert(keys.end(), {"kernel", "stride", "padding"});
  if (layer.type == LayerType::BatchNorm) keys.insert(keys.end(), {"sync", "momentum", "eps"});
  if (layer.type == LayerType::ResidualBlock) keys.insert(keys.end(), {"out", "stride", "sync"});
  if (layer.type == LayerType::Moe)
    keys.insert(keys.end(), {"experts", "top_k", "ffn", "capacity_factor", "aux_loss_weight"});
  const JsonObjectReader reader(value, path, keys);
  reader.read("out", layer.out);
  reader.read("bias", layer.bias);
  reader.read("p", layer.p);
  reader.read("vocab", layer.vocab);
  reader.read("dim", layer.dim);
  reader.read("rope_theta", layer.rope_theta);
  reader.read("heads", layer.heads);
  reader.read("kv_heads", layer.kv_heads);
  reader.read("ffn", layer.ffn);
  reader.read("causal", layer.causal);
  reader.read("dropout", layer.dropout);
  if (pool) layer.kernel = 2;  // a pool's usual window: 2 x 2, not overlapping
  reader.read("kernel", layer.kernel);
  if (pool) layer.stride = layer.kernel;
  reader.read("stride", layer.stride);
  reader.read("padding", layer.padding);
  reader.read("sync", layer.sync);
  reader.read("momentum", layer.momentum);
  reader.read("eps", layer.eps);
  reader.read("experts", layer.experts);
  reader.read("top_k", layer.top_k);
  reader.read("capacity_factor", layer.capacity_factor);
  reader.read("aux_loss_weight", layer.aux_loss_weight);
  if (const Json* position = reader.find("position"))
    layer.position = json_to_name<PositionEncoding>(*position, path + ".position", "a position encoding",
                                                    parse_position_encoding, position_encoding_names());
  if (const Json* norm = reader.find("norm"))
    layer.norm = json_to_name<NormType>(*norm, path + ".norm", "a norm", parse_norm_type, norm_type_names());
  if (const Json* activation = reader.find("activation"))
    layer.activation = json_to_name<BlockActivation>(*activation, path + ".activation", "an activation",
                                                     parse_block_activation, block_activation_names());
  return layer;
}

// `repeat: N` stands for N copies of the entry (a 96-block model is one line).
int read_repeat(const Json& value, int index) {
  const auto repeat = value.find("repeat");
  if (repeat == value.end()) return 1;
  const std::string path = "model.layers[" + std::to_string(index) + "].repeat";
  const int64_t count = json_to_int(*repeat, path);
  if (count < 1 || count > kMaxLayers)
    throw ExperimentError(path + " = " + std::to_string(count) + "; repeat a layer 1 to " +
                          std::to_string(kMaxLayers) + " times");
  return static_cast<int>(count);
}

ModelSpec read_model(const JsonObjectReader& top, const DataSpec& data) {
  const Json* value = top.find("model");
  if (!value)
    throw ExperimentError(
        "model is missing; describe the network, e.g. \"model\": {\"input\": [784], \"layers\": "
        "[{\"type\": \"linear\", \"out\": 10}]}");
  const JsonObjectReader reader(*value, "model", {"input", "layers", "loss"});
  ModelSpec model;

  if (const Json* input = reader.find("input")) {
    model.input = json_to_integer_list(*input, "model.input");
  } else {
    // Without an input shape, take the width the data source gives.
    const int64_t features = data_source_shape(data).features;
    if (features <= 0)
      throw ExperimentError("model.input is missing and data.source " + quoted_excerpt(data.source) +
                            " does not fix it; give the input shape per sample, e.g. \"input\": [784]");
    model.input = {features};
  }

  const Json* layers = reader.find("layers");
  if (!layers)
    throw ExperimentError("model.layers is missing; list the layers, e.g. [{\"type\": \"linear\", \"out\": 10}]");
  if (!layers->is_array())
    throw ExperimentError("model.layers must be an array of layers, got " + json_value_text(*layers));
  for (size_t i = 0; i < layers->size(); ++i) {
    const int index = static_cast<int>(i);
    const LayerSpec layer = read_layer((*layers)[i], index);
    const int repeat = read_repeat((*layers)[i], index);
    // (Without repeats an overlong stack is reported by validation, with the count.)
    if (repeat > 1 && model.layers.size() + static_cast<size_t>(repeat) > static_cast<size_t>(kMaxLayers))
      throw ExperimentError("model.layers: with repeats the model has more than " + std::to_string(kMaxLayers) +
                            " layers, more than PipeLab handles; use fewer layers or smaller repeats");
    model.layers.insert(model.layers.end(), static_cast<size_t>(repeat), layer);
  }

  if (const Json* loss = reader.find("loss"))
    model.loss = json_to_name<LossType>(*loss, "model.loss", "a loss", parse_loss_type, loss_type_names());
  return model;
}

DataSpec read_data(const JsonObjectReader& top) {
  DataSpec data;
  const Json* value = top.find("data");
  if (!value) return data;
  // A sequence set's length is the model's input width, one fact in one
  // place; a length here too could only disagree with it.
  if (value->is_object())
    for (const char* key : {"sequence_length", "seq_len"})
      if (value->contains(key))
        throw ExperimentError(std::string("data.") + key +
                              ": a sequence set's samples are as long as the model's input; remove it "
                              "and set model.input = [N] for N tokens per sample");
  const JsonObjectReader reader(*value, "data",
                                {"source", "path", "validation_fraction", "samples", "classes", "features",
                                 "noise", "limit", "vocab", "stride"});
  reader.read("source", data.source);
  reader.read("path", data.path);
  reader.read("validation_fraction", data.validation_fraction);
  reader.read("samples", data.samples);
  reader.read("classes", data.classes);
  reader.read("features", data.features);
  reader.read("noise", data.noise);
  reader.read("limit", data.limit);
  reader.read("vocab", data.vocab);
  reader.read("stride", data.stride);
  return data;
}

OptimizerSpec read_optimizer(const Json& value) {
  OptimizerSpec optimizer;
  const JsonObjectReader reader(value, "training.optimizer",
                                {"type", "lr", "momentum", "beta1", "beta2", "eps", "weight_decay"});
  reader.read("type", optimizer.type);
  reader.read("lr", optimizer.lr);
  reader.read("momentum", optimizer.momentum);
  reader.read("beta1", optimizer.beta1);
  reader.read("beta2", optimizer.beta2);
  reader.read("eps", optimizer.eps);
  reader.read("weight_decay", optimizer.weight_decay);
  return optimizer;
}

PipeMareSpec read_pipemare(const Json& value) {
  PipeMareSpec pipemare;
  const JsonObjectReader reader(value, "training.pipemare",
                                {"lr_rescheduling", "lr_warmup_updates", "discrepancy_correction", "velocity_decay"});
  reader.read("lr_rescheduling", pipemare.lr_rescheduling);
  reader.read("lr_warmup_updates", pipemare.lr_warmup_updates);
  reader.read("discrepancy_correction", pipemare.discrepancy_correction);
  reader.read("velocity_decay", pipemare.velocity_decay);
  return pipemare;
}

TrainingSpec read_training(const JsonObjectReader& top) {
  TrainingSpec training;
  const Json* value = top.find("training");
  if (!value) return training;
  const JsonObjectReader reader(*value, "training",
                                {"batch_size", "steps", "optimizer", "eval_every", "precision",
                                 "fp32_gradients", "pipemare"});
  reader.read("batch_size", training.batch_size);
  reader.read("fp32_gradients", training.fp32_gradients);
  if (const Json* precision = reader.find("precision"))
    training.precision = json_to_name<Precision>(*precision, "training.precision", "a precision", parse_precision,
                                                 precision_names());
  reader.read("steps", training.steps);
  reader.read("eval_every", training.eval_every);
  if (const Json* optimizer = reader.find("optimizer")) training.optimizer = read_optimizer(*optimizer);
  if (const Json* pipemare = reader.find("pipemare")) training.pipemare = read_pipemare(*pipemare);
  return training;
}

ParallelPlan read_parallel(const JsonObjectReader& top) {
  ParallelPlan plan;
  const Json* value = top.find("parallel");
  if (!value) return plan;
  const JsonObjectReader reader(
      *value, "parallel",
      {"dp", "tp", "pp", "microbatches", "chunks", "schedule", "update", "recompute", "partition",
       "staleness", "sequence_parallel", "offload", "ep", "zero", "reshard_after_forward", "cp",
       "recompute_layers"});
  reader.read("dp", plan.dp);
  reader.read("tp", plan.tp);
  reader.read("pp", plan.pp);
  reader.read("microbatches", plan.microbatches);
  reader.read("chunks", plan.chunks);
  reader.read("sequence_parallel", plan.sequence_parallel);
  if (const Json* recompute = reader.find("recompute")) {
    // false, true (= "full", the stage as the unit), "block" (each Transformer
    // block as the unit) or "selective" (transformer blocks' attention core only).
    if (recompute->is_boolean()) {
      plan.recompute = recompute->get<bool>();
    } else if (recompute->is_string() && (*recompute == "full" || *recompute == "block" ||
                                          *recompute == "selective" || *recompute == "none")) {
      plan.recompute = *recompute == "full" || *recompute == "block";
      plan.recompute_blocks = *recompute == "block";
      plan.selective_recompute = *recompute == "selective";
    } else {
      throw ExperimentError(
          "parallel.recompute must be false, true (\"full\": keep only each stage's input and "
          "rebuild the stage), \"block\" (keep each Transformer block's input and rebuild one "
          "block at a time, as Megatron-LM) or \"selective\" (recompute transformer blocks' "
          "attention), got " +
          json_value_text(*recompute));
    }
  }
  reader.read("recompute_layers", plan.recompute_layers);
  reader.read("staleness", plan.staleness);
  reader.read("ep", plan.ep);
  reader.read("zero", plan.zero);
  reader.read("reshard_after_forward", plan.reshard_after_forward);
  reader.read("cp", plan.cp);
  if (const Json* offload = reader.find("offload"))
    plan.offload = json_to_name<OffloadMode>(*offload, "parallel.offload", "an offload mode", parse_offload,
                                             offload_names());
  if (const Json* schedule = reader.find("schedule"))
    plan.schedule = json_to_name<ScheduleKind>(*schedule, "parallel.schedule", "a schedule", parse_schedule,
                                               schedule_names());
  if (const Json* update = reader.find("update"))
    plan.update = json_to_name<UpdateMode>(*update, "parallel.update", "an update mode", parse_update,
                                           {"sync", "async"});
  if (const Json* partition = reader.find("partition")) {
    // Either a rule's name or the explicit list of stage start indices.
    if (partition->is_array()) {
      plan.partition = PartitionRule::Explicit;
      for (size_t i = 0; i < partition->size(); ++i)
        plan.boundaries.push_back(json_to_int((*partition)[i], "parallel.partition[" + std::to_string(i) + "]"));
    } else if (partition->is_string()) {
      plan.partition = json_to_name<PartitionRule>(*partition, "parallel.partition", "a partition rule",
                                                   parse_partition, partition_rule_names());
    } else {
      throw ExperimentError("parallel.partition must be a rule (" + join_names(partition_rule_names()) +
                            ") or an array of stage start indices like [2, 4], got " +
                            json_value_text(*partition));
    }
  }
  return plan;
}

SimulationSpec read_simulation(const JsonObjectReader& top) {
  SimulationSpec simulation;
  const Json* value = top.find("simulation");
  if (!value) return simulation;
  const JsonObjectReader reader(*value, "simulation", {"profile", "cluster", "overlap_grad_reduce", "unit"});
  reader.read("profile", simulation.profile);
  reader.read("overlap_grad_reduce", simulation.overlap_grad_reduce);
  if (const Json* cluster = reader.find("cluster")) {
    const JsonObjectReader cluster_reader(*cluster, "simulation.cluster", {"node", "nodes"});
    cluster_reader.read("node", simulation.cluster.node);
    cluster_reader.read("nodes", simulation.cluster.nodes);
  }
  if (const Json* unit = reader.find("unit")) {
    const JsonObjectReader unit_reader(*unit, "simulation.unit", {"f", "b", "w", "comm", "u"});
    unit_reader.read("f", simulation.unit.f);
    unit_reader.read("b", simulation.unit.b);
    unit_reader.read("w", simulation.unit.w);
    unit_reader.read("comm", simulation.unit.comm);
    unit_reader.read("u", simulation.unit.u);
  }
  return simulation;
}

BackendSpec read_backend(const JsonObjectReader& top) {
  BackendSpec backend;
  const Json* value = top.find("backend");
  if (!value) return backend;
  const JsonObjectReader reader(*value, "backend", {"type", "threads", "tf32"});
  reader.read("type", backend.type);
  reader.read("threads", backend.threads);
  reader.read("tf32", backend.tf32);
  return backend;
}

}  // namespace

Experiment experiment_from_json(const Json& document) {
  // "preset": a preset file's menu entry and note, read by the app
  // (ui/models/presets.h); "published": the measured run an experiment under
  // examples/published/ reproduces (bench/published_runs.py). An experiment
  // as such ignores both.
  const JsonObjectReader top(document, "",
                             {"name", "seed", "model", "data", "training", "parallel", "simulation", "backend",
                              "preset", "published"});
  Experiment experiment;
  top.read("name", experiment.name);
  top.read("seed", experiment.seed);
  // Data first: a missing model.input defaults to the data's width.
  experiment.data = read_data(top);
  experiment.model = read_model(top, experiment.data);
  experiment.training = read_training(top);
  experiment.parallel = read_parallel(top);
  experiment.simulation = read_simulation(top);
  experiment.backend = read_backend(top);
  return experiment;
}

}  // namespace pipelab
