#include "core/planner/launch_export.h"

#include <cstdio>

#include "core/io/experiment_io.h"
#include "core/text/number_text.h"

namespace pipelab {
namespace {

// What Megatron-LM and torchtitan call a GPT: an embedding, identical
// transformer blocks, a final norm and the output layer.
struct SequenceModel {
  int blocks = 0;
  LayerSpec block;  // the first block's spec
  bool blocks_differ = false;
  int64_t width = 0;  // the embedding's dim
  int64_t vocab = 0;
  int64_t sequence = 0;  // positions per sample
  PositionEncoding position = PositionEncoding::Learned;
  double rope_theta = kDefaultRopeTheta;
};

SequenceModel read_sequence_model(const ModelSpec& model) {
  if (!is_sequence_model(model) || model.input.size() != 1)
    throw ExperimentError(
        "only a sequence model (an embedding, then transformer blocks) has a Megatron-LM or "
        "torchtitan equivalent; this model starts with a " +
        std::string(model.layers.empty() ? "nothing" : layer_type_name(model.layers.front().type)) +
        " layer");
  SequenceModel gpt;
  gpt.width = model.layers.front().dim;
  gpt.vocab = model.layers.front().vocab;
  gpt.position = model.layers.front().position;
  gpt.rope_theta = model.layers.front().rope_theta;
  gpt.sequence = model.input.front();
  for (size_t i = 1; i < model.layers.size(); ++i) {
    const LayerSpec& layer = model.layers[i];
    if (layer.type == LayerType::TransformerBlock) {
      if (gpt.blocks == 0)
        gpt.block = layer;
      else if (!(layer == gpt.block))
        gpt.blocks_differ = true;
      ++gpt.blocks;
      continue;
    }
    const bool head = layer.type == LayerType::LayerNorm || layer.type == LayerType::Linear;
    if (!head || gpt.blocks == 0)
      throw ExperimentError("layer " + std::to_string(i) + " (" + layer_type_name(layer.type) +
                            ") has no place in a Megatron-LM or torchtitan GPT, which is an "
                            "embedding, transformer blocks, a final norm and the output layer");
  }
  if (gpt.blocks == 0)
    throw ExperimentError(
        "the model has no transformer_block; Megatron-LM and torchtitan train "
        "GPTs of transformer blocks");
  return gpt;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string flag(const std::string& name, int64_t value) {
  return "--" + name + " " + std::to_string(value);
}

int64_t ffn_width(const SequenceModel& gpt) {
  return gpt.block.ffn > 0 ? gpt.block.ffn : 4 * gpt.width;
}

int64_t kv_heads(const SequenceModel& gpt) {
  return gpt.block.kv_heads > 0 ? gpt.block.kv_heads : gpt.block.heads;
}

// Facts both tools lack, whatever the split.
void common_unmapped(const Experiment& experiment, const SequenceModel& gpt,
                     std::vector<std::string>& unmapped) {
  const ParallelPlan& plan = experiment.parallel;
  if (gpt.blocks_differ)
    unmapped.push_back("the blocks differ from one another: the first block's shape is exported");
  if (plan.partition != PartitionRule::Uniform && plan.stages() > 1)
    unmapped.push_back(std::string("parallel.partition = ") +
                       (plan.partition == PartitionRule::Explicit
                            ? "explicit boundaries"
                            : partition_name(plan.partition)) +
                       ": both tools give each stage an equal share of the blocks");
  if (plan.offload == OffloadMode::Activations)
    unmapped.push_back("parallel.offload = activations: neither tool offloads saved activations");
  if (plan.update == UpdateMode::Async)
    unmapped.push_back("parallel.update = async: both tools update synchronously");
}

LaunchExport megatron(const Experiment& experiment) {
  const SequenceModel gpt = read_sequence_model(experiment.model);
  const ParallelPlan& plan = experiment.parallel;
  LaunchExport out;
  std::vector<std::string>& f = out.lines;
  f.push_back(flag("tensor-model-parallel-size", plan.tp));
  f.push_back(flag("pipeline-model-parallel-size", plan.pp));
  if (plan.cp > 1) f.push_back(flag("context-parallel-size", plan.cp));
  if (plan.ep > 1) f.push_back(flag("expert-model-parallel-size", plan.ep));
  if (plan.chunks > 1) {
    if (gpt.blocks % plan.stages() == 0)
      f.push_back(flag("num-layers-per-virtual-pipeline-stage", gpt.blocks / plan.stages()));
    else
      out.unmapped.push_back("parallel.chunks = " + std::to_string(plan.chunks) + ": " +
                             std::to_string(gpt.blocks) + " blocks do not split evenly into " +
                             std::to_string(plan.stages()) +
                             " virtual stages, as Megatron-LM needs");
  }
  switch (plan.schedule) {
    case ScheduleKind::OneFOneB:
    case ScheduleKind::Interleaved1F1B:
      break;
    default:
      if (plan.pp > 1)
        out.unmapped.push_back(std::string("parallel.schedule = ") + schedule_name(plan.schedule) +
                               ": Megatron-LM runs 1F1B (interleaved with virtual stages)");
  }
  if (plan.sequence_parallel) f.push_back("--sequence-parallel");
  if (plan.zero == 1) f.push_back("--use-distributed-optimizer");
  if (plan.zero >= 2) {
    f.push_back("--use-distributed-optimizer");
    f.push_back("--use-megatron-fsdp");
    f.push_back(std::string("--data-parallel-sharding-strategy ") +
                (plan.zero == 2 ? "optim_grads" : "optim_grads_params"));
    if (plan.zero == 3 && !plan.reshard_after_forward)
      out.unmapped.push_back(
          "parallel.reshard_after_forward = false: Megatron-FSDP has no such switch; exported as "
          "optim_grads_params, which gathers the weights again for the backward");
  }
  if (plan.offload == OffloadMode::Optimizer) f.push_back("--optimizer-cpu-offload");
  if (plan.recompute) {
    // Uniform chunks of layers, each chunk's input kept: one block per chunk,
    // or the stage's blocks as one chunk (the stage as the unit).
    f.push_back("--recompute-granularity full");
    f.push_back("--recompute-method uniform");
    if (plan.recompute_blocks)
      f.push_back(flag("recompute-num-layers", plan.recompute_layers));
    else if (gpt.blocks % plan.stages() == 0)
      f.push_back(flag("recompute-num-layers", gpt.blocks / plan.stages()));
    else
      out.unmapped.push_back("parallel.recompute = true: " + std::to_string(gpt.blocks) +
                             " blocks do not split evenly into " + std::to_string(plan.stages()) +
                             " stages, so no recompute-num-layers makes each stage one chunk");
  } else if (plan.selective_recompute) {
    f.push_back("--recompute-granularity selective");
  }
  if (experiment.simulation.overlap_grad_reduce && plan.data_parallel_size() > 1)
    f.push_back("--overlap-grad-reduce");
  f.push_back(flag("micro-batch-size", microbatch_size(experiment)));
  f.push_back(flag("global-batch-size", experiment.training.batch_size));

  f.push_back(flag("num-layers", gpt.blocks));
  f.push_back(flag("hidden-size", gpt.width));
  f.push_back(flag("ffn-hidden-size", ffn_width(gpt)));
  f.push_back(flag("num-attention-heads", gpt.block.heads));
  if (kv_heads(gpt) != gpt.block.heads) {
    f.push_back("--group-query-attention");
    f.push_back(flag("num-query-groups", kv_heads(gpt)));
  }
  if (gpt.block.experts > 0) {
    f.push_back(flag("num-experts", gpt.block.experts));
    f.push_back(flag("moe-router-topk", gpt.block.top_k));
  }
  f.push_back(flag("seq-length", gpt.sequence));
  f.push_back(flag("max-position-embeddings", gpt.sequence));
  f.push_back(std::string("--position-embedding-type ") +
              (gpt.position == PositionEncoding::Rope ? "rope" : "learned_absolute"));
  if (gpt.position == PositionEncoding::Rope)
    f.push_back("--rotary-base " + number_text(gpt.rope_theta));
  f.push_back(std::string("--normalization ") +
              (gpt.block.norm == NormType::RmsNorm ? "RMSNorm" : "LayerNorm"));
  if (gpt.block.activation == BlockActivation::SwiGlu) f.push_back("--swiglu");
  if (!gpt.block.bias) f.push_back("--disable-bias-linear");
  f.push_back("--attention-dropout " + number(gpt.block.dropout));
  f.push_back("--hidden-dropout " + number(gpt.block.dropout));
  f.push_back(flag("vocab-size", gpt.vocab));
  if (experiment.training.precision == Precision::Bf16Mixed) {
    f.push_back("--bf16");
    // With --bf16 Megatron-LM accumulates and reduces gradients in float32
    // unless told to keep them in bf16.
    f.push_back(experiment.training.fp32_gradients ? "--accumulate-allreduce-grads-in-fp32"
                                                   : "--grad-reduce-in-bf16");
  }
  if (!gpt.block.causal)
    out.unmapped.push_back(
        "the blocks attend both ways (causal false): Megatron-LM's GPT is causal");
  common_unmapped(experiment, gpt, out.unmapped);
  return out;
}

std::string quoted(const std::string& text) { return "\"" + text + "\""; }

// torchtitan's name of a PipeLab schedule (its pipeline_parallel_schedule), or null.
const char* torchtitan_schedule(ScheduleKind kind) {
  static const std::pair<ScheduleKind, const char*> names[] = {
      {ScheduleKind::GPipe, "GPipe"},
      {ScheduleKind::OneFOneB, "1F1B"},
      {ScheduleKind::Interleaved1F1B, "Interleaved1F1B"},
      {ScheduleKind::ZeroBubbleV, "ZBVZeroBubble"},
      {ScheduleKind::DualPipeV, "DualPipeV"}};
  for (const auto& [schedule, name] : names)
    if (schedule == kind) return name;
  return nullptr;
}

LaunchExport torchtitan(const Experiment& experiment) {
  const SequenceModel gpt = read_sequence_model(experiment.model);
  const ParallelPlan& plan = experiment.parallel;
  LaunchExport out;
  std::vector<std::string>& t = out.lines;
  t.push_back("[parallelism]");
  if (plan.zero == 0) {
    t.push_back("data_parallel_replicate_degree = " + std::to_string(plan.dp));
    t.push_back("data_parallel_shard_degree = 1");
  } else {
    t.push_back("data_parallel_replicate_degree = 1");
    t.push_back("data_parallel_shard_degree = " + std::to_string(plan.dp));
    t.push_back(std::string("fsdp_reshard_after_forward = ") +
                quoted(plan.zero == 3 && plan.reshard_after_forward ? "always" : "never"));
    if (plan.zero == 1)
      out.unmapped.push_back(
          "parallel.zero = 1: torchtitan shards with FSDP2, which shards the gradients too; "
          "exported as ZeRO-2 (reshard never)");
  }
  t.push_back("tensor_parallel_degree = " + std::to_string(plan.tp));
  t.push_back("context_parallel_degree = " + std::to_string(plan.cp));
  t.push_back("expert_parallel_degree = " + std::to_string(plan.ep));
  t.push_back("pipeline_parallel_degree = " + std::to_string(plan.pp));
  if (plan.pp > 1) {
    const char* schedule = torchtitan_schedule(plan.schedule);
    if (schedule)
      t.push_back(std::string("pipeline_parallel_schedule = ") + quoted(schedule));
    else
      out.unmapped.push_back(std::string("parallel.schedule = ") + schedule_name(plan.schedule) +
                             ": torchtitan has no such schedule");
    if (plan.chunks > 1 && gpt.blocks % plan.stages() != 0)
      out.unmapped.push_back(std::to_string(gpt.blocks) + " blocks do not split evenly into " +
                             std::to_string(plan.stages()) + " stages");
    t.push_back("pipeline_parallel_layers_per_stage = " +
                std::to_string((gpt.blocks + plan.stages() - 1) / plan.stages()));
    t.push_back("pipeline_parallel_microbatch_size = " +
                std::to_string(microbatch_size(experiment)));
  }
  if (plan.tp > 1 && !plan.sequence_parallel)
    out.unmapped.push_back(
        "parallel.sequence_parallel = false: torchtitan always splits the "
        "sequence with tensor parallelism");
  if (plan.offload == OffloadMode::Optimizer)
    out.unmapped.push_back(
        "parallel.offload = optimizer: torchtitan does not offload the optimizer");
  t.push_back("");
  t.push_back("[training]");
  t.push_back("local_batch_size = " + std::to_string(experiment.training.batch_size / plan.dp));
  t.push_back("global_batch_size = " + std::to_string(experiment.training.batch_size));
  t.push_back("seq_len = " + std::to_string(gpt.sequence));
  if (experiment.training.precision == Precision::Bf16Mixed) {
    t.push_back("mixed_precision_param = " + quoted("bfloat16"));
    t.push_back("mixed_precision_reduce = " +
                quoted(experiment.training.fp32_gradients ? "float32" : "bfloat16"));
  }
  t.push_back("");
  t.push_back("[activation_checkpoint]");
  t.push_back(std::string("mode = ") + quoted(plan.recompute             ? "full"
                                              : plan.selective_recompute ? "selective"
                                                                         : "none"));
  if (!plan.recompute && plan.selective_recompute)
    t.push_back("selective_ac_option = " + quoted("op"));
  if (plan.recompute && !plan.recompute_blocks)
    out.unmapped.push_back(
        "parallel.recompute = true: torchtitan's full activation checkpointing keeps each block's "
        "input "
        "(PipeLab's \"block\"), not only each stage's; exported as mode = \"full\"");
  if (plan.recompute_blocks && plan.recompute_layers > 1)
    out.unmapped.push_back("parallel.recompute_layers = " + std::to_string(plan.recompute_layers) +
                           ": torchtitan's full activation checkpointing keeps every block's "
                           "input; exported as mode = \"full\"");
  out.unmapped.push_back(
      "the model itself: torchtitan names a model flavour in its [model] "
      "section; choose the one with " +
      std::to_string(gpt.blocks) + " blocks of width " + std::to_string(gpt.width) + ", " +
      std::to_string(gpt.block.heads) + " heads (" + std::to_string(kv_heads(gpt)) +
      " key/value), FFN " + std::to_string(ffn_width(gpt)) + ", vocabulary " +
      std::to_string(gpt.vocab));
  common_unmapped(experiment, gpt, out.unmapped);
  return out;
}

}  // namespace

const char* launch_tool_name(LaunchTool tool) {
  return tool == LaunchTool::Megatron ? "megatron" : "torchtitan";
}

std::optional<LaunchTool> parse_launch_tool(const std::string& name) {
  if (name == "megatron") return LaunchTool::Megatron;
  if (name == "torchtitan") return LaunchTool::Torchtitan;
  return std::nullopt;
}

LaunchExport export_launch(const Experiment& experiment, LaunchTool tool) {
  return tool == LaunchTool::Megatron ? megatron(experiment) : torchtitan(experiment);
}

std::string launch_text(const LaunchExport& exported, LaunchTool tool) {
  std::string text;
  for (size_t i = 0; i < exported.lines.size(); ++i) {
    text += exported.lines[i];
    const bool last = i + 1 == exported.lines.size();
    text += tool == LaunchTool::Megatron && !last ? " \\\n" : "\n";
  }
  for (const std::string& line : exported.unmapped) text += "# not exported: " + line + "\n";
  return text;
}

}  // namespace pipelab
