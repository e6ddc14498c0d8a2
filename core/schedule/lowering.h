// Lowering: turns a compute schedule (pp devices, F/B/BI/BW only) into the full
// per-device program for a dp x tp x pp plan: sends and receives between
// neighbouring stages, tensor-parallel all-reduces, the data-parallel gradient
// all-reduce (sync) or parameter-server push/pull (async), recomputation and the
// optimizer step.
#pragma once

#include <vector>

#include "core/plan/parallel_plan.h"
#include "core/plan/stage_profile.h"
#include "core/schedule/schedule.h"

namespace pipelab {

// What each device's list holds (devices numbered as in core/plan/device_layout.h;
// each device runs its pipeline rank's compute ops in the same order):
//   F:     [RECV_ACT] F [ALLREDUCE tp, one per forward tp_allreduce]
//          [ALLREDUCE dp, one per forward batch_statistics_allreduce]
//          [ALL_TO_ALL ep, a moe layer's dispatch and combine, layer by layer] [SEND_ACT]
//   B, BI: [RECV_GRAD] [RECOMPUTE] B [ALLREDUCE tp, one per backward entry]
//          [ALLREDUCE dp, synced batch norm's backward ones]
//          [ALL_TO_ALL ep, two per moe layer, last layer first] [SEND_GRAD]
// A receive names the stage that receives, a send the stage that sends; a send
// on stage s matches the receive on stage s +/- 1 with the same micro-batch and
// step. They are left out when both stages share a device (pp = 1, chunks > 1).
// Activation messages carry the sender's output_bytes, gradient messages the
// sender's input_bytes. Sends never block; receives wait for their send.
//
// Activation offloading (plan.offload = activations): OFFLOAD follows a
// micro-batch's F group (after its SEND_ACT) and its RELOAD comes just before
// the compute op that precedes its B/BI (before that op's receive): one
// compute op of prefetch, so the copy overlaps it. Both carry the stage's
// activation_bytes and run on the device's copy lane. A micro-batch whose
// B/BI comes less than three compute ops after its F (the last stage under
// 1F1B) keeps its activations: nothing would run while they are away.
//
// Weight updates, per stage (per chunk for interleaved):
//  - synchronous schedules: after the stage's last backward (B or BW) of each
//    step, [ALLREDUCE dp (microbatch -1, params * 4 bytes) if dp > 1] then U
//    (microbatch -1). Step t's compute ops read version t; its U writes t + 1.
//  - pipedream, pipemare: [ALLREDUCE dp] U after every B (U carries the B's
//    micro-batch); pipedream-2bw: after the last B of each step. U writes the
//    stage's next version (1, 2, ...); F reads the newest, B the one its F read
//    (pipemare: the newest, and a Recompute before it too).
//  - async data parallel (plan.update == Async, dp > 1, synchronous schedule):
//    instead of the all-reduce and U, PUSH_GRAD then PULL_WEIGHTS (group
//    DataParallel, microbatch -1, params * 4 bytes each). Bounded staleness: the
//    PULL_WEIGHTS of step t, on any replica, waits until every replica has done
//    the PUSH_GRAD of step t - staleness (pushes never wait). The pulled weights
//    therefore hold at least every gradient of steps 0..t - staleness, and we
//    record that as version max(0, t + 1 - staleness); step t's compute ops read
//    the version pulled at the end of step t - 1, max(0, t - staleness). The
//    window must hold at least staleness + 2 steps (build_schedule's default).
//    With staleness 0 this is synchronous training again.
//
// Context parallelism (plan.cp > 1): every transformer block's ring attention
// runs inside its compute ops on the context-parallel group: an ALL_GATHER
// of K and V after F, and after B or BI an ALL_GATHER of K and V and a
// REDUCE_SCATTER of their gradients (StageProfile::context_parallel_exchanges),
// before the tensor-parallel ones. The data-parallel group of a stage shard
// spans its replicas and their context ranks (dp x cp devices, which hold the
// same weights): "dp > 1" below means dp x cp > 1.
//
// ZeRO (plan.zero, dp > 1; synchronous schedules), data-parallel group:
//  - zero 1: the step's ALLREDUCE becomes REDUCE_SCATTER (gradient_bytes),
//    then U (of the device's shard), then ALL_GATHER (weight_bytes): the
//    updated weights for the next step (Megatron-LM's distributed optimizer).
//  - zero 2: a REDUCE_SCATTER after every B and BW (DeepSpeed's stage 2
//    reduces each micro-batch's gradients into the shard), then U ALL_GATHER.
//  - zero 3: as zero 2, and an ALL_GATHER (weight_bytes) of the stage's
//    weights for every F, B and BI, issued one compute op ahead of it (FSDP's
//    prefetch: before the compute op that precedes it), carrying the step
//    and micro-batch of the op that reads it; no gather after U. Without
//    reshard_after_forward only for the F that finds no micro-batch of its
//    chunk holding the weights (between its F and its B, or BW).
// A collective's bytes are the whole buffer; each member keeps (or gives)
// 1/dp of it. With optimizer offloading the OFFLOAD and RELOAD carry the
// device's shard.
//
// Optimizer offloading (plan.offload = optimizer, ZeRO-Offload): the weight
// update becomes [ALLREDUCE dp] OFFLOAD U RELOAD (micro-batch -1): the
// gradients (gradient_bytes) go to the host, the host runs U on its optimizer
// state, the new weights (weight_bytes) come back. Synchronous schedules only.
//
// Throws std::invalid_argument naming the field and fix when the plan does not
// match the compute schedule, dp or tp < 1, offload = activations comes with
// recompute, staleness < 0, the profiles are not
// one per stage, the async window is too short, or update = async is asked of
// an asynchronous schedule with dp > 1 (it is asynchronous already).
//
// `profiles` (one per stage) fill in communication bytes and the exact
// tensor-parallel all-reduces; when empty, bytes are 0 and tensor parallelism
// gets one all-reduce after each F and each B/BI.
// `first_replica_only` lowers replica 0's devices alone (Schedule::first_replica_only).
Schedule lower_schedule(const Schedule& compute, const ParallelPlan& plan,
                        const std::vector<StageProfile>& profiles = {},
                        bool first_replica_only = false);

// Throws std::invalid_argument naming the fields and the fix when the plan
// combines offloading with what it cannot go with (offload = activations and
// recompute; offload = optimizer and an asynchronous schedule or update).
void check_offload(const ParallelPlan& plan);

// Throws std::invalid_argument naming the fields and the fix when the plan
// asks for a ZeRO stage outside 0..3, or combines one with what it cannot go
// with: an asynchronous schedule or update (each replica updates alone, so
// there is no step to shard), or zero 2 and 3 with a pipeline (pp > 1),
// which DeepSpeed refuses too: their gradients are reduce-scattered at every
// micro-batch, and a pipeline's interleaved micro-batches would wait on it.
void check_zero(const ParallelPlan& plan);

// Throws std::invalid_argument naming the field and the fix when parallel.cp
// is below 1, or above 1 with asynchronous data parallelism (update = async,
// dp > 1): the context ranks sum their gradients every step. What cp needs of
// the model (a Transformer, a sequence the ranks split evenly) profile_stages checks.
void check_context_parallel(const ParallelPlan& plan);

// Plans larger than this many ops (counted as check_schedule_size does) are
// refused. Simulating one takes about 125 bytes per op: 8 x 64 x 1024 (4M ops)
// runs in under a second in 0.5 GB, and this limit, four times that, in about
// 2 GB and 8 s. That is past any plan a person reads, and it keeps a typo from
// exhausting a laptop's memory.
inline constexpr double kMaxScheduleOps = 1 << 24;

// The steps build_schedule's window spans when asked for `steps` (0: the
// default window: generate_schedule's, or staleness + 2 for async data parallel).
int window_steps(const ParallelPlan& plan, int steps);

// About how many ops build_schedule(plan, ..., steps, first_replica_only)
// makes, from the degrees alone (nothing is built).
double schedule_size_estimate(const ParallelPlan& plan, int steps, bool first_replica_only = false);

// Whether one data-parallel replica's programs stand for all of them: with
// synchronous updates every replica runs the same ops at the same times, so
// the simulator can run replica 0 alone (SimulationOptions::first_replica_only).
bool replicas_run_alike(const ParallelPlan& plan);

// Throws std::invalid_argument (naming the degrees) when the plan's schedule
// would exceed kMaxScheduleOps over a window of `steps` steps (0: the
// default), counting replica 0's ops alone under first_replica_only.
void check_schedule_size(const ParallelPlan& plan, int steps, bool first_replica_only = false);

// The op that runs a stage's tensor-parallel collective.
OpKind tensor_parallel_op_kind(TensorParallelCollective collective);

// generate_schedule + lower_schedule for a whole plan over window_steps(plan,
// steps) steps; refuses oversized plans (check_schedule_size).
Schedule build_schedule(const ParallelPlan& plan, const std::vector<StageProfile>& profiles = {},
                        int steps = 0, bool first_replica_only = false);

}  // namespace pipelab
