// validate_experiment: every check that needs more than one field's type,
// each problem one line naming the fields and the fix.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/hardware/device_profile.h"
#include "core/io/data_sources.h"
#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"
#include "core/io/json_reader.h"
#include "core/plan/plan_limits.h"
#include "core/plan/stage_profile.h"
#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "core/text/number_text.h"

namespace pipelab {
namespace {

using Problems = std::vector<std::string>;

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

void check_at_least(Problems& problems, const std::string& field, int64_t value, int64_t minimum) {
  if (value < minimum)
    problems.push_back(field + " must be >= " + std::to_string(minimum) + ", got " + std::to_string(value));
}

void check_at_most(Problems& problems, const std::string& field, int64_t value, int64_t maximum) {
  if (value > maximum)
    problems.push_back(field + " = " + std::to_string(value) + " is more than the " +
                       std::to_string(maximum) + " PipeLab plans; use at most " + std::to_string(maximum));
}

// [0, 1): fractions and decay rates. Written so NaN fails too.
void check_unit_interval(Problems& problems, const std::string& field, double value) {
  if (!(value >= 0.0 && value < 1.0))
    problems.push_back(field + " = " + number_text(value) + " must be in [0, 1)");
}

void check_non_negative(Problems& problems, const std::string& field, double value) {
  if (!(value >= 0.0)) problems.push_back(field + " = " + number_text(value) + " must be >= 0");
}

// Returns whether the layer stack itself is usable (shapes, widths, p).
bool check_model(const ModelSpec& model, Problems& problems) {
  try {
    describe_layers(model);
    return true;
  } catch (const std::invalid_argument& error) {
    problems.push_back(error.what());
    return false;
  }
}

void check_data(const DataSpec& data, const ModelSpec& model, bool model_ok, Problems& problems) {
  if (!is_data_source(data.source)) {
    problems.push_back(unknown_name_message("data.source", data.source, "a data source", data_source_names()));
    return;
  }
  check_unit_interval(problems, "data.validation_fraction", data.validation_fraction);
  if (is_file_data_source(data.source)) {
    if (data.path.empty())
      problems.push_back("data.path is empty; data.source = '" + data.source + "' reads " +
                         (data.source == "csv"    ? "a CSV file: give its path"
                          : data.source == "text" ? "a UTF-8 text file: give its path (the LICENSE file will do)"
                                                  : "files: give the folder holding them"));
    if (data.source == "text") check_at_least(problems, "data.stride", data.stride, 0);
    check_at_least(problems, "data.limit", data.limit, 0);
  } else {
    check_at_least(problems, "data.samples", data.samples, 1);
    check_non_negative(problems, "data.noise", data.noise);
    // teacher with classes = 0 is a regression set (one target per sample).
    const bool teacher_regression = data.source == "teacher" && data.classes == 0;
    if (teacher_regression && model.loss != LossType::Mse)
      problems.push_back("data.classes = 0 makes 'teacher' a regression set (one target per sample); "
                         "it needs model.loss = mse, or set data.classes >= 2");
    if ((data.source == "spiral" || data.source == "blobs" || data.source == "teacher") &&
        !teacher_regression)
      check_at_least(problems, "data.classes", data.classes, 2);
    if (data.source == "blobs" || data.source == "teacher")
      check_at_least(problems, "data.features", data.features, 1);
    if (is_sequence_data_source(data.source)) check_at_least(problems, "data.vocab", data.vocab, 1);
  }

  // The model's ends must fit the data where the source fixes them.
  if (!model_ok) return;
  if (is_sequence_model(model) != is_sequence_data_source(data.source)) {
    problems.push_back(is_sequence_model(model)
                           ? "model.layers[0] is an embedding, which reads token ids, but data.source '" +
                                 data.source + "' gives feature vectors; use data.source = text, copy, reverse, "
                                 "sort or add"
                           : "data.source '" + data.source + "' gives token sequences, which need a model that "
                             "starts with an embedding layer; add {\"type\": \"embedding\", \"vocab\": ..., "
                             "\"dim\": ...} as model.layers[0]");
    return;
  }
  const DataShape shape = data_source_shape(data);
  if (shape.features > 0 && input_features(model) != shape.features)
    problems.push_back("model.input = " + shape_text(model.input) + " gives " +
                       std::to_string(input_features(model)) + " features but data.source '" + data.source +
                       "' has " + std::to_string(shape.features) + "; set model.input to [" +
                       std::to_string(shape.features) + "]");
  if (is_sequence_model(model)) {
    // Token sets: every position's output scores the vocabulary.
    const int64_t per_token = output_features(model) / sequence_length(model);
    if (shape.classes > 0 && per_token != shape.classes)
      problems.push_back("the model outputs " + std::to_string(per_token) + " values per position but data.source '" +
                         data.source + "' has a vocabulary of " + std::to_string(shape.classes) +
                         " tokens (data.vocab); set the last linear layer's out to " + std::to_string(shape.classes));
    if (shape.classes > 0 && model.layers.front().vocab < shape.classes)
      problems.push_back("the embedding's vocab = " + std::to_string(model.layers.front().vocab) +
                         " is smaller than data.vocab = " + std::to_string(shape.classes) +
                         "; set model.layers[0].vocab to at least " + std::to_string(shape.classes));
    return;
  }
  if (shape.classes > 0 && output_features(model) != shape.classes)
    problems.push_back("the model outputs " + std::to_string(output_features(model)) +
                       " values but data.source '" + data.source + "' has " + std::to_string(shape.classes) +
                       (data.classes == 0 ? " target" : " classes") + "; set the last linear layer's out to " +
                       std::to_string(shape.classes));
}

void check_training(const TrainingSpec& training, Problems& problems) {
  check_at_least(problems, "training.batch_size", training.batch_size, 1);
  check_at_least(problems, "training.steps", training.steps, 1);
  check_at_least(problems, "training.eval_every", training.eval_every, 0);

  const OptimizerSpec& optimizer = training.optimizer;
  const std::vector<std::string> optimizers = {"sgd", "adam", "adamw"};
  if (std::find(optimizers.begin(), optimizers.end(), optimizer.type) == optimizers.end())
    problems.push_back(unknown_name_message("training.optimizer.type", optimizer.type, "an optimizer", optimizers));
  if (!(optimizer.lr > 0.0 && std::isfinite(optimizer.lr)))
    problems.push_back("training.optimizer.lr = " + number_text(optimizer.lr) + " must be > 0, e.g. 0.05");
  check_unit_interval(problems, "training.optimizer.momentum", optimizer.momentum);
  check_unit_interval(problems, "training.optimizer.beta1", optimizer.beta1);
  check_unit_interval(problems, "training.optimizer.beta2", optimizer.beta2);
  if (!(optimizer.eps > 0.0))
    problems.push_back("training.optimizer.eps = " + number_text(optimizer.eps) + " must be > 0, e.g. 1e-8");
  check_non_negative(problems, "training.optimizer.weight_decay", optimizer.weight_decay);

  const PipeMareSpec& pipemare = training.pipemare;
  if (pipemare.lr_warmup_updates < 1)
    problems.push_back("training.pipemare.lr_warmup_updates = " + std::to_string(pipemare.lr_warmup_updates) +
                       " must be >= 1 (updates over which the step size returns to training.optimizer.lr); "
                       "to keep the plain step size set lr_rescheduling = false");
  check_unit_interval(problems, "training.pipemare.velocity_decay", pipemare.velocity_decay);
}

// The largest divisor of `total` that is <= `limit`: a micro-batch count to suggest.
int64_t largest_divisor_up_to(int64_t total, int64_t limit) {
  for (int64_t d = std::min(total, limit); d > 1; --d)
    if (total % d == 0) return d;
  return 1;
}

void check_schedule(const ParallelPlan& plan, Problems& problems) {
  const bool interleaved = plan.schedule == ScheduleKind::Interleaved1F1B;
  const bool v_placement = uses_v_placement(plan.schedule);
  if (v_placement && plan.chunks != 2)
    problems.push_back(std::string("parallel.schedule = ") + schedule_name(plan.schedule) +
                       " needs parallel.chunks = 2 (each device holds two virtual stages placed in a V; got "
                       "chunks = " + std::to_string(plan.chunks) + "); set chunks = 2");
  if (plan.chunks > 1 && !interleaved && !v_placement)
    problems.push_back("parallel.chunks = " + std::to_string(plan.chunks) + " needs parallel.schedule = "
                       "interleaved-1f1b (schedule " + schedule_name(plan.schedule) +
                       " places one stage per device); set chunks = 1 or change the schedule");
  if (interleaved && plan.chunks < 2)
    problems.push_back("parallel.schedule = interleaved-1f1b needs parallel.chunks >= 2 (virtual stages per "
                       "device); with chunks = 1 it is plain 1f1b");
  if (interleaved && plan.chunks >= 2 && plan.pp >= 1 && plan.microbatches >= 1) {
    const std::string problem = interleaved_microbatches_problem(plan.pp, plan.microbatches);
    if (!problem.empty()) problems.push_back("parallel.microbatches: " + problem);
  }
  if (plan.schedule == ScheduleKind::DualPipeV && plan.pp >= 1) {
    const std::string problem = dualpipe_v_microbatches_problem(plan.pp, plan.microbatches);
    if (!problem.empty()) problems.push_back("parallel.microbatches: " + problem);
  }
  if (plan.schedule == ScheduleKind::PipeDream2BW && plan.microbatches < plan.pp)
    problems.push_back("parallel.microbatches = " + std::to_string(plan.microbatches) +
                       " must be >= parallel.pp = " + std::to_string(plan.pp) +
                       " for pipedream-2bw (two weight versions suffice only when a step's "
                       "micro-batches fill the pipeline); use microbatches = " + std::to_string(plan.pp));
  if (plan.update == UpdateMode::Async && is_asynchronous(plan.schedule))
    problems.push_back(std::string("parallel.update = async with parallel.schedule = ") +
                       schedule_name(plan.schedule) + " is contradictory: update = async means "
                       "asynchronous data parallelism through a parameter server, while " +
                       schedule_name(plan.schedule) + " already updates asynchronously inside the pipeline "
                       "with its own weight versions; use update = sync with " + schedule_name(plan.schedule) +
                       ", or a synchronous schedule (e.g. 1f1b) with update = async");
}

// parallel.ep: groups of ep data-parallel replicas share each moe layer's
// experts, so ep divides dp and every moe layer's experts.
void check_expert_parallel(const Experiment& experiment, bool model_ok, bool model_has_experts,
                           Problems& problems) {
  const ParallelPlan& plan = experiment.parallel;
  if (plan.ep == 1) return;
  if (plan.dp % plan.ep != 0) {
    problems.push_back("parallel.ep = " + std::to_string(plan.ep) + " does not divide parallel.dp = " +
                       std::to_string(plan.dp) +
                       ": expert-parallel groups are carved out of the data-parallel replicas; use an ep "
                       "that divides dp, or raise dp");
    return;
  }
  if (!model_ok) return;
  if (!model_has_experts) {
    problems.push_back(
        "parallel.ep = " + std::to_string(plan.ep) +
        " spreads moe layers' experts over replicas, and this model has none; set ep = 1 or "
        "add a moe layer (or experts to a transformer_block)");
    return;
  }
  for (size_t i = 0; i < experiment.model.layers.size(); ++i) {
    const LayerSpec& layer = experiment.model.layers[i];
    if (has_experts(layer) && layer.experts % plan.ep != 0) {
      problems.push_back("model.layers[" + std::to_string(i) + "] has " + std::to_string(layer.experts) +
                         " experts, which parallel.ep = " + std::to_string(plan.ep) +
                         " cannot share out evenly; use an ep that divides the experts");
      return;
    }
  }
  if (plan.update == UpdateMode::Async && plan.dp > 1)
    problems.push_back("parallel.ep > 1 exchanges tokens between replicas at every micro-batch, which "
                       "asynchronous data parallel cannot wait for; set parallel.update = sync or ep = 1");
}

// Whether check_parallel ends by profiling the split itself (profile_stages).
enum class SplitCheck { Profile, Skip };

void check_parallel(const Experiment& experiment, bool model_ok, Problems& problems,
                    SplitCheck split = SplitCheck::Profile) {
  const ParallelPlan& plan = experiment.parallel;
  const size_t before = problems.size();
  check_at_least(problems, "parallel.dp", plan.dp, 1);
  check_at_least(problems, "parallel.tp", plan.tp, 1);
  check_at_least(problems, "parallel.pp", plan.pp, 1);
  check_at_least(problems, "parallel.microbatches", plan.microbatches, 1);
  check_at_least(problems, "parallel.chunks", plan.chunks, 1);
  check_at_least(problems, "parallel.staleness", plan.staleness, 0);
  check_at_least(problems, "parallel.ep", plan.ep, 1);
  check_at_least(problems, "parallel.zero", plan.zero, 0);
  check_at_least(problems, "parallel.cp", plan.cp, 1);
  check_at_most(problems, "parallel.dp", plan.dp, kMaxDataParallel);
  check_at_most(problems, "parallel.tp", plan.tp, kMaxTensorParallel);
  check_at_most(problems, "parallel.pp", plan.pp, kMaxPipelineDevices);
  check_at_most(problems, "parallel.microbatches", plan.microbatches, kMaxMicrobatches);
  check_at_most(problems, "parallel.chunks", plan.chunks, kMaxChunks);
  check_at_most(problems, "parallel.staleness", plan.staleness, kMaxStaleness);
  check_at_most(problems, "parallel.ep", plan.ep, kMaxDataParallel);
  check_at_most(problems, "parallel.zero", plan.zero, 3);
  check_at_most(problems, "parallel.cp", plan.cp, kMaxContextParallel);
  if (problems.size() != before) return;  // the checks below divide and multiply by these
  check_schedule(plan, problems);
  try {
    // The window the simulator builds: replica 0 alone when it stands for all.
    check_schedule_size(plan, 0, replicas_run_alike(plan));
  } catch (const std::invalid_argument& error) {
    problems.push_back(error.what());
    return;
  }
  for (void (*check)(const ParallelPlan&) : {check_offload, check_zero, check_context_parallel}) {
    try {
      check(plan);
    } catch (const std::invalid_argument& error) {
      problems.push_back(error.what());
    }
  }

  const int64_t batch = experiment.training.batch_size;
  if (batch < 1) return;  // reported by check_training
  if (batch % plan.dp != 0) {
    problems.push_back("training.batch_size = " + std::to_string(batch) + " is not divisible by parallel.dp = " +
                       std::to_string(plan.dp) + "; every replica takes an equal share of the batch");
    return;
  }
  const int64_t per_replica = batch / plan.dp;
  if (per_replica % plan.microbatches != 0) {
    const std::string division = plan.dp > 1 ? std::to_string(batch) + " / " + std::to_string(plan.dp) + " = " : "";
    problems.push_back("parallel.microbatches = " + std::to_string(plan.microbatches) +
                       " does not divide the per-replica batch training.batch_size / parallel.dp = " + division +
                       std::to_string(per_replica) + "; use e.g. " +
                       std::to_string(largest_divisor_up_to(per_replica, plan.microbatches)));
    return;
  }

  if (plan.sequence_parallel && plan.tp < 2)
    problems.push_back("parallel.sequence_parallel splits the work tensor parallelism repeats on every shard, "
                       "so it needs parallel.tp >= 2 (now " + std::to_string(plan.tp) +
                       "); raise tp or set sequence_parallel = false");
  if (model_ok && plan.sequence_parallel && !is_sequence_model(experiment.model))
    problems.push_back("parallel.sequence_parallel splits along the sequence, so it needs a Transformer (a model "
                       "that starts with an embedding); set sequence_parallel = false");
  if (model_ok && plan.selective_recompute &&
      std::none_of(experiment.model.layers.begin(), experiment.model.layers.end(),
                   [](const LayerSpec& layer) { return layer.type == LayerType::TransformerBlock; }))
    problems.push_back("parallel.recompute = \"selective\" recomputes transformer blocks' attention, and this "
                       "model has none; use recompute = true (full) or false");
  if (model_ok && plan.recompute_blocks &&
      std::none_of(
          experiment.model.layers.begin(), experiment.model.layers.end(),
          [](const LayerSpec& layer) { return layer.type == LayerType::TransformerBlock; }))
    problems.push_back(
        "parallel.recompute = \"block\" keeps each Transformer block's input, and this model has "
        "none; use recompute = true (full) or false");
  if (plan.recompute_layers < 1)
    problems.push_back("parallel.recompute_layers = " + std::to_string(plan.recompute_layers) +
                       " must be at least 1 (the blocks rebuilt together under recompute = "
                       "\"block\")");
  else if (plan.recompute_layers > 1 && !plan.recompute_blocks)
    problems.push_back("parallel.recompute_layers = " + std::to_string(plan.recompute_layers) +
                       " groups the blocks that recompute = \"block\" rebuilds together; set "
                       "recompute = \"block\", or remove recompute_layers");

  const bool experts = model_has_experts(experiment.model);
  check_expert_parallel(experiment, model_ok, experts, problems);
  const bool synced_batch_norm = std::any_of(experiment.model.layers.begin(), experiment.model.layers.end(),
                                             [](const LayerSpec& layer) { return layer.sync; });
  if (model_ok && synced_batch_norm && plan.update == UpdateMode::Async && plan.dp > 1)
    problems.push_back("a batchnorm with sync: true sums its statistics over the replicas at every micro-batch, "
                       "which asynchronous data parallel cannot wait for; set parallel.update = sync, or "
                       "sync: false on the batch norms");

  // The split itself: enough layers for the stages, explicit boundaries, tp widths.
  if (!model_ok || split == SplitCheck::Skip) return;
  try {
    profile_stages(experiment.model, plan, per_replica / plan.microbatches, experiment.training.precision);
  } catch (const std::invalid_argument& error) {
    problems.push_back(error.what());
  }
}

void check_simulation(const Experiment& experiment, Problems& problems) {
  const SimulationSpec& simulation = experiment.simulation;
  if (simulation.profile == "unit") {
    if (!simulation.cluster.empty())
      problems.push_back("simulation.cluster needs a device, but simulation.profile = unit prices every op at "
                         "its unit cost on no hardware; set simulation.profile to a device (e.g. h100) or drop "
                         "simulation.cluster");
  } else if (!names_hardware_file(simulation.profile) && !find_device_profile(simulation.profile)) {
    std::vector<std::string> profiles = device_profile_names();
    profiles.push_back("unit");
    problems.push_back(unknown_name_message("simulation.profile", simulation.profile, "a device profile", profiles) +
                       ", or the path of a device file (hardware/README.md)");
  } else {
    try {
      experiment_cluster(experiment);
    } catch (const ExperimentError& error) {
      problems.push_back(error.what());
    }
  }
  check_non_negative(problems, "simulation.unit.f", simulation.unit.f);
  check_non_negative(problems, "simulation.unit.b", simulation.unit.b);
  check_non_negative(problems, "simulation.unit.w", simulation.unit.w);
  check_non_negative(problems, "simulation.unit.comm", simulation.unit.comm);
  check_non_negative(problems, "simulation.unit.u", simulation.unit.u);
}

void check_backend(const BackendSpec& backend, Problems& problems) {
  const std::vector<std::string> backends = {"cpu", "cuda"};
  if (std::find(backends.begin(), backends.end(), backend.type) == backends.end())
    problems.push_back(unknown_name_message("backend.type", backend.type, "a backend", backends));
  check_at_least(problems, "backend.threads", backend.threads, 0);
}

}  // namespace

std::vector<std::string> validate_parallel(const Experiment& experiment) {
  Problems problems;
  check_parallel(experiment, true, problems);
  return problems;
}

std::vector<std::string> validate_parallel_fields(const Experiment& experiment) {
  Problems problems;
  check_parallel(experiment, true, problems, SplitCheck::Skip);
  return problems;
}

std::vector<std::string> validate_experiment(const Experiment& experiment) {
  Problems problems;
  const bool model_ok = check_model(experiment.model, problems);
  check_data(experiment.data, experiment.model, model_ok, problems);
  check_training(experiment.training, problems);
  check_parallel(experiment, model_ok, problems);
  check_simulation(experiment, problems);
  check_backend(experiment.backend, problems);
  return problems;
}

}  // namespace pipelab
