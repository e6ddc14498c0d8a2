// Hand a plan over: the experiment's split (and the model it splits) as the
// command-line flags of Megatron-LM's pretrain_gpt.py, or as the sections of
// a torchtitan job file. What the other tool cannot say is listed with the
// reason, never dropped in silence.
//
// Megatron-LM (megatron/training/arguments.py):
//   tp, pp, cp, ep       --tensor-/--pipeline-model-parallel-size, --context-parallel-size,
//                        --expert-model-parallel-size (ep > 1)
//   dp                   not a flag: world size / (tp x pp x cp)
//   interleaved, v       --num-layers-per-virtual-pipeline-stage: blocks / (pp x v), which must
//   divide sequence_parallel    --sequence-parallel zero 1 --use-distributed-optimizer zero 2, 3
//   --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads,
//                        optim_grads_params (with --use-distributed-optimizer)
//   offload optimizer    --optimizer-cpu-offload
//   recompute            --recompute-granularity selective; full adds --recompute-method uniform
//                        --recompute-num-layers 1 ("block": every block's input kept) or the
//                        stage's block count (true: each stage one chunk)
//   micro-batches        --micro-batch-size batch / (dp x m), --global-batch-size batch
//   overlap_grad_reduce  --overlap-grad-reduce
//   the model            --num-layers, --hidden-size, --ffn-hidden-size, --num-attention-heads,
//                        --group-query-attention --num-query-groups, --seq-length,
//                        --max-position-embeddings, --position-embedding-type, --normalization,
//                        --swiglu, --disable-bias-linear, --attention-/--hidden-dropout, --bf16
// Megatron-LM's schedule is 1F1B, interleaved when virtual stages are given;
// gpipe, zb-h1, zb-v, dualpipev and the asynchronous schedules are listed.
//
// torchtitan (the [parallelism], [training] and [activation_checkpoint]
// sections of a job file):
//   zero 0               data_parallel_replicate_degree = dp (DDP)
//   zero 2, 3            data_parallel_shard_degree = dp (FSDP2), fsdp_reshard_after_forward
//                        "never" (zero 2, and zero 3 without reshard_after_forward: the
//                        weights stay gathered between forward and backward) or "always"
//                        (zero 3)
//   zero 1               listed: FSDP2 shards gradients too
//   tp, pp, cp, ep       tensor_/pipeline_/context_/expert_parallel_degree
//   schedule             pipeline_parallel_schedule "GPipe", "1F1B", "Interleaved1F1B",
//                        "ZBVZeroBubble", "DualPipeV"; zb-h1 and the asynchronous ones listed
//   micro-batches        pipeline_parallel_microbatch_size; local_batch_size batch / dp,
//                        global_batch_size, seq_len
//   recompute            activation_checkpoint mode "none", "selective" (selective_ac_option
//                        "op"), "full"
// torchtitan applies sequence parallelism whenever tp > 1: a plan without it is listed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/io/experiment.h"

namespace pipelab {

enum class LaunchTool { Megatron, Torchtitan };
const char* launch_tool_name(LaunchTool tool);  // "megatron", "torchtitan"
std::optional<LaunchTool> parse_launch_tool(const std::string& name);

struct LaunchExport {
  std::vector<std::string> lines;  // Megatron: one flag (with its value) per line; torchtitan: TOML
  std::vector<std::string> unmapped;  // each: what has no equivalent, and why
};

// The experiment must validate. Only sequence models (an embedding, then
// transformer blocks) have a Megatron-LM or torchtitan equivalent: any other
// model throws ExperimentError saying so.
LaunchExport export_launch(const Experiment& experiment, LaunchTool tool);

// The export as a user pastes it: Megatron's flags joined by " \\\n", torchtitan's TOML as it
// is, then the unmapped fields as comments ("# not exported: ...").
std::string launch_text(const LaunchExport& exported, LaunchTool tool);

}  // namespace pipelab
