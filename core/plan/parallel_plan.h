// ParallelPlan: how a model is split (dp x tp x cp x pp), scheduled and updated.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/model/mixture_of_experts.h"
#include "core/plan/device_layout.h"

namespace pipelab {

enum class ScheduleKind {
  GPipe,
  OneFOneB,
  Interleaved1F1B,
  ZeroBubbleH1,
  ZeroBubbleV,
  DualPipeV,
  PipeDream,
  PipeDream2BW,
  PipeMare
};
enum class UpdateMode { Sync, Async };
enum class PartitionRule { Balanced, Uniform, Params, Explicit };
// What waits in host memory instead of the device's: nothing, each
// forward's saved activations between the forward and its backward (OFFLOAD
// after F, RELOAD prefetched before B), or the optimizer state, with the
// update run on the host (ZeRO-Offload: OFFLOAD of the gradients before U,
// RELOAD of the new weights after it). See lowering.h.
enum class OffloadMode { None, Activations, Optimizer };

// zb-v and dualpipev place exactly two chunks per device in a V (see
// device_layout.h); a fact of the schedule table (parallel_plan.cpp).
bool uses_v_placement(ScheduleKind kind);

struct ParallelPlan {
  int dp = 1;             // data-parallel replicas
  int tp = 1;             // tensor-parallel shards per stage
  int pp = 1;             // pipeline devices
  int microbatches = 1;   // per step and replica
  ScheduleKind schedule = ScheduleKind::OneFOneB;
  UpdateMode update = UpdateMode::Sync;
  // Full recomputation: the forward keeps only checkpoints and the
  // activations are rebuilt before the backward. Its unit is the stage
  // (GPipe's re-materialisation: only the stage input is kept, the stage is
  // rebuilt whole before B), or with recompute_blocks each Transformer block
  // (Megatron-LM's full granularity, uniform method: the input of every
  // recompute_layers-th block is kept and that many blocks are rebuilt at a
  // time, --recompute-num-layers; a layer that is not a block ends a group).
  // The cpu executor runs both units (core/nn/stage_stack.h); the cuda
  // executor rebuilds whole stages.
  bool recompute = false;
  bool recompute_blocks = false;
  int recompute_layers = 1;          // blocks per checkpoint under recompute_blocks
  bool selective_recompute = false;  // transformer blocks keep no attention scores; B recomputes them
  bool sequence_parallel = false;    // tp > 1: norms, dropouts, residuals split along the sequence
  OffloadMode offload = OffloadMode::None;
  int chunks = 1;         // virtual stages per pipeline device (interleaved-1f1b; 2 for zb-v, dualpipev)
  PartitionRule partition = PartitionRule::Balanced;
  // Explicit: the layer index each stage after the first starts at
  // (pp * chunks - 1 strictly increasing values).
  std::vector<int> boundaries;
  int staleness = 2;      // async data parallel: max steps a gradient may lag
  // Expert parallelism: groups of ep consecutive data-parallel replicas share
  // each moe layer's experts (ep divides dp and every layer's experts).
  int ep = 1;
  // ZeRO stage within each data-parallel group (zero_sharding.h): 0 none,
  // 1 the optimizer state sharded, 2 also the gradients, 3 also the weights
  // (FSDP's full sharding).
  int zero = 0;
  // ZeRO 3: whether a unit's gathered weights are freed after its forward
  // and gathered again for its backward (FSDP's reshard_after_forward, the
  // default), or kept until the micro-batches in flight have run their
  // backward (less traffic, more memory: the weights are gathered once per
  // forward pass instead of twice).
  bool reshard_after_forward = true;
  // Context parallelism: cp ranks split every sequence of a replica and stage
  // (each holds two of 2 cp chunks, balancing causal attention as Megatron-LM
  // does); attention passes K and V around the ring (stage_profile.h). The cp
  // ranks hold the same weights, so their gradients are summed with the
  // replicas' (data-parallel groups span dp x cp devices).
  int cp = 1;

  int stages() const { return pp * chunks; }             // pipeline stages in total
  int devices() const { return dp * tp * cp * pp; }      // devices in total
  // Devices that hold the same weights of a stage shard and sum its gradients.
  int data_parallel_size() const { return dp * cp; }
  DeviceLayout layout() const { return {dp, tp, pp, uses_v_placement(schedule), ep, cp}; }
};

// Names as written in experiment files and on the command line.
const char* schedule_name(ScheduleKind kind);
std::optional<ScheduleKind> parse_schedule(const std::string& name);
std::vector<std::string> schedule_names();             // every valid name, in order
const char* schedule_description(ScheduleKind kind);    // one line, for help and the UI
bool is_asynchronous(ScheduleKind kind);                // pipedream, pipedream-2bw, pipemare
bool updates_after_every_backward(ScheduleKind kind);   // pipedream, pipemare: one U per B
// pipemare: a backward reads the stage's newest weights, not the version its
// forward read (no weight stashing); every other schedule's backward reads its
// forward's version.
bool backward_reads_newest_weights(ScheduleKind kind);

const char* update_name(UpdateMode mode);
std::optional<UpdateMode> parse_update(const std::string& name);
const char* offload_name(OffloadMode mode);
std::optional<OffloadMode> parse_offload(const std::string& name);
std::vector<std::string> offload_names();              // every valid name, in order
const char* partition_name(PartitionRule rule);
std::optional<PartitionRule> parse_partition(const std::string& name);

// The experts a replica holds: it is member replica % ep of the group of
// replicas [replica - replica % ep, + ep).
ExpertShard expert_shard(const ParallelPlan& plan, int replica);

// The plan's device numbering (see device_layout.h).
DeviceCoord device_coord(const ParallelPlan& plan, int device);
int device_id(const ParallelPlan& plan, DeviceCoord coord);

}  // namespace pipelab
