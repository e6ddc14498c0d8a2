// OpKind and the one table of facts about each kind. Whatever the simulator,
// the validator, the exporters or the UI need to know about a kind (its names,
// its family, its colour, whether it reads weights, which part of its stage's
// work it does, which end of a message it is) is a field of the kind's row;
// code reads the row instead of listing kinds. A new kind is an enumerator and
// a row here, plus what each interpreter does when it runs one.
#pragma once

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace pipelab {

struct StageProfile;

enum class OpKind {
  Forward,         // F
  Backward,        // B: fused input and weight gradient
  BackwardInput,   // BI: input gradient only (zero-bubble)
  BackwardWeight,  // BW: weight gradient only (zero-bubble)
  Update,          // U: optimizer step
  SendActivation,  // to the next stage's device
  RecvActivation,  // from the previous stage's device
  SendGradient,    // to the previous stage's device
  RecvGradient,    // from the next stage's device
  AllReduce,       // collective over a group (tensor-parallel or data-parallel)
  Recompute,       // rebuild a micro-batch's activations before its backward
  Offload,         // to host memory: a micro-batch's activations, or (-1) the step's gradients
  Reload,          // from host memory: the activations back, or (-1) the updated weights
  PushGradient,    // async data parallel: send gradients to the parameter server
  PullWeights,     // async data parallel: fetch the newest weights
  ReduceScatter,   // sequence parallel: sum over the tensor-parallel group, each keeps a slice
  AllGather,       // sequence parallel: every member gets every slice
  AllToAll,        // expert parallel: member j's chunk to member j (keep last: kOpKindCount)
};
inline constexpr size_t kOpKindCount = static_cast<size_t>(OpKind::AllToAll) + 1;

// What an op does, broadly. Compute occupies the device's compute; the rest
// moves data and is drawn on the communication lane.
enum class OpFamily {
  Compute,          // F, B, BI, BW, U, RECOMPUTE
  PointToPoint,     // activations and gradients between neighbouring stages
  Collective,       // all-reduce, reduce-scatter, all-gather or all-to-all over a group
  ParameterServer,  // async data parallel's push and pull
  HostTransfer,     // activations (or gradients and weights) to host memory and back
};

// The colour an op is drawn in. The UI maps each role to one colour, and
// each role is one entry of the timeline's legend, in this order.
enum class OpColorRole {
  Forward,
  Backward,
  BackwardInput,
  BackwardWeight,
  Update,
  Recompute,
  PointToPoint,
  AllReduce,        // all-reduce, and sequence parallel's reduce-scatter and all-gather
  AllToAll,         // expert parallel's token dispatch and combine
  ParameterServer,
  HostTransfer,
};

// Which parts of its stage's work a compute op does, per micro-batch (the
// optimizer step: per update). The cost model and calibration price an op by
// these: a fused B costs both backward parts, RECOMPUTE a forward again.
struct StageWork {
  bool forward = false;          // the stage's forward FLOPs
  bool backward_input = false;   // the input-gradient FLOPs (consumes the output gradient)
  bool backward_weight = false;  // the weight-gradient FLOPs (ends the micro-batch's backward)
  bool optimizer_step = false;   // elementwise over every parameter: memory-bound
};

// Which end of a point-to-point message (between neighbouring stages of one
// replica and shard) an op is.
enum class MessageEnd { None, Send, Receive };

struct OpKindFacts {
  OpKind kind = OpKind::Forward;
  const char* name = nullptr;        // traces, CSV, JSON, labels: "F", "SEND_ACT"
  const char* short_name = nullptr;  // the text timeline grid: "F", "R"
  OpFamily family = OpFamily::Compute;
  OpColorRole color_role = OpColorRole::Forward;
  StageWork work;               // none for every family but Compute
  bool reads_weights = false;   // reads a weight version (F, B, BI, BW, RECOMPUTE)
  bool writes_weights = false;  // makes a new weight version current (U, PULL_WEIGHTS)
  // Placed by the schedule generators (F, B, BI, BW); lowering adds the rest.
  bool in_compute_schedule = false;
  bool needs_microbatch = false;  // handles one micro-batch (its field must name one)
  bool waits_for_group = false;   // blocks until its whole group arrives (collectives, PULL)
  // Collectives: how many times the data crosses a ring, in units of
  // (n-1)/n x bytes per member: 2 for an all-reduce (a reduce-scatter, then an
  // all-gather), 1 for either half alone, and 1 for an all-to-all (each member
  // sends all but its own 1/n of its bytes).
  int ring_passes = 0;
  MessageEnd message_end = MessageEnd::None;
  int peer_stage_offset = 0;           // a message's other end: its stage minus this op's
  OpKind other_end = OpKind::Forward;  // a message's other end: its kind
};

// One row per kind, in enum order (checked below).
inline constexpr std::array<OpKindFacts, kOpKindCount> kOpKindTable = {{
    {.kind = OpKind::Forward,
     .name = "F",
     .short_name = "F",
     .color_role = OpColorRole::Forward,
     .work = {.forward = true},
     .reads_weights = true,
     .in_compute_schedule = true,
     .needs_microbatch = true},
    {.kind = OpKind::Backward,
     .name = "B",
     .short_name = "B",
     .color_role = OpColorRole::Backward,
     .work = {.backward_input = true, .backward_weight = true},
     .reads_weights = true,
     .in_compute_schedule = true,
     .needs_microbatch = true},
    {.kind = OpKind::BackwardInput,
     .name = "BI",
     .short_name = "BI",
     .color_role = OpColorRole::BackwardInput,
     .work = {.backward_input = true},
     .reads_weights = true,
     .in_compute_schedule = true,
     .needs_microbatch = true},
    {.kind = OpKind::BackwardWeight,
     .name = "BW",
     .short_name = "BW",
     .color_role = OpColorRole::BackwardWeight,
     .work = {.backward_weight = true},
     .reads_weights = true,
     .in_compute_schedule = true,
     .needs_microbatch = true},
    {.kind = OpKind::Update,
     .name = "U",
     .short_name = "U",
     .color_role = OpColorRole::Update,
     .work = {.optimizer_step = true},
     .writes_weights = true},
    {.kind = OpKind::SendActivation,
     .name = "SEND_ACT",
     .short_name = "SEND_ACT",
     .family = OpFamily::PointToPoint,
     .color_role = OpColorRole::PointToPoint,
     .work = {},
     .needs_microbatch = true,
     .message_end = MessageEnd::Send,
     .peer_stage_offset = +1,
     .other_end = OpKind::RecvActivation},
    {.kind = OpKind::RecvActivation,
     .name = "RECV_ACT",
     .short_name = "RECV_ACT",
     .family = OpFamily::PointToPoint,
     .color_role = OpColorRole::PointToPoint,
     .work = {},
     .needs_microbatch = true,
     .message_end = MessageEnd::Receive,
     .peer_stage_offset = -1,
     .other_end = OpKind::SendActivation},
    {.kind = OpKind::SendGradient,
     .name = "SEND_GRAD",
     .short_name = "SEND_GRAD",
     .family = OpFamily::PointToPoint,
     .color_role = OpColorRole::PointToPoint,
     .work = {},
     .needs_microbatch = true,
     .message_end = MessageEnd::Send,
     .peer_stage_offset = -1,
     .other_end = OpKind::RecvGradient},
    {.kind = OpKind::RecvGradient,
     .name = "RECV_GRAD",
     .short_name = "RECV_GRAD",
     .family = OpFamily::PointToPoint,
     .color_role = OpColorRole::PointToPoint,
     .work = {},
     .needs_microbatch = true,
     .message_end = MessageEnd::Receive,
     .peer_stage_offset = +1,
     .other_end = OpKind::SendGradient},
    {.kind = OpKind::AllReduce,
     .name = "ALLREDUCE",
     .short_name = "ALLREDUCE",
     .family = OpFamily::Collective,
     .color_role = OpColorRole::AllReduce,
     .work = {},
     .waits_for_group = true,
     .ring_passes = 2},
    {.kind = OpKind::Recompute,
     .name = "RECOMPUTE",
     .short_name = "R",
     .color_role = OpColorRole::Recompute,
     .work = {.forward = true},
     .reads_weights = true,
     .needs_microbatch = true},
    // A micro-batch's activations, or (micro-batch -1) the optimizer offload's
    // gradients and weights.
    {.kind = OpKind::Offload,
     .name = "OFFLOAD",
     .short_name = "OFFLOAD",
     .family = OpFamily::HostTransfer,
     .color_role = OpColorRole::HostTransfer,
     .work = {}},
    {.kind = OpKind::Reload,
     .name = "RELOAD",
     .short_name = "RELOAD",
     .family = OpFamily::HostTransfer,
     .color_role = OpColorRole::HostTransfer,
     .work = {}},
    {.kind = OpKind::PushGradient,
     .name = "PUSH_GRAD",
     .short_name = "PUSH_GRAD",
     .family = OpFamily::ParameterServer,
     .color_role = OpColorRole::ParameterServer,
     .work = {}},
    {.kind = OpKind::PullWeights,
     .name = "PULL_WEIGHTS",
     .short_name = "PULL_WEIGHTS",
     .family = OpFamily::ParameterServer,
     .color_role = OpColorRole::ParameterServer,
     .work = {},
     .writes_weights = true,
     .waits_for_group = true},
    {.kind = OpKind::ReduceScatter,
     .name = "REDUCE_SCATTER",
     .short_name = "RS",
     .family = OpFamily::Collective,
     .color_role = OpColorRole::AllReduce,
     .work = {},
     .waits_for_group = true,
     .ring_passes = 1},
    {.kind = OpKind::AllGather,
     .name = "ALL_GATHER",
     .short_name = "AG",
     .family = OpFamily::Collective,
     .color_role = OpColorRole::AllReduce,
     .work = {},
     .waits_for_group = true,
     .ring_passes = 1},
    // A moe layer's token dispatch or combine over its expert-parallel group,
    // run inside the F or B (BI) it follows.
    {.kind = OpKind::AllToAll,
     .name = "ALL_TO_ALL",
     .short_name = "A2A",
     .family = OpFamily::Collective,
     .color_role = OpColorRole::AllToAll,
     .work = {},
     .needs_microbatch = true,
     .waits_for_group = true,
     .ring_passes = 1},
}};

constexpr bool op_kind_table_is_in_enum_order() {
  for (size_t i = 0; i < kOpKindTable.size(); ++i)
    if (kOpKindTable[i].kind != static_cast<OpKind>(i) || kOpKindTable[i].name == nullptr ||
        kOpKindTable[i].short_name == nullptr)
      return false;
  return true;
}
static_assert(op_kind_table_is_in_enum_order(),
              "kOpKindTable needs one named row per OpKind, in enum order");

// Every kind, in enum order, for code and tests that walk them all.
inline constexpr std::array<OpKind, kOpKindCount> kAllOpKinds = [] {
  std::array<OpKind, kOpKindCount> kinds{};
  for (size_t i = 0; i < kinds.size(); ++i) kinds[i] = kOpKindTable[i].kind;
  return kinds;
}();

constexpr const OpKindFacts& op_kind_facts(OpKind kind) {
  assert(static_cast<size_t>(kind) < kOpKindTable.size());
  return kOpKindTable[static_cast<size_t>(kind)];
}

// The names traces, CSV, JSON and labels use: F, B, BI, BW, U, SEND_ACT, ...
constexpr const char* op_kind_name(OpKind kind) { return op_kind_facts(kind).name; }
std::optional<OpKind> parse_op_kind(const std::string& name);

constexpr bool is_compute(OpKind kind) { return op_kind_facts(kind).family == OpFamily::Compute; }
// All-reduce, reduce-scatter, all-gather, all-to-all: every member of a group takes part.
constexpr bool is_collective(OpKind kind) { return op_kind_facts(kind).family == OpFamily::Collective; }
constexpr bool is_communication(OpKind kind) { return !is_compute(kind); }
constexpr bool is_send(OpKind kind) { return op_kind_facts(kind).message_end == MessageEnd::Send; }
constexpr bool is_receive(OpKind kind) {
  return op_kind_facts(kind).message_end == MessageEnd::Receive;
}
// B and BI take the output gradient from the next stage; B and BW end a
// micro-batch's backward on its stage (its activations are done, its weight
// gradient complete).
constexpr bool computes_input_gradient(OpKind kind) {
  return op_kind_facts(kind).work.backward_input;
}
constexpr bool computes_weight_gradient(OpKind kind) {
  return op_kind_facts(kind).work.backward_weight;
}

// FLOPs of one op of `kind` on `stage`, from the work it does (0 for ops that
// do no stage FLOPs: U is memory-bound, communication costs bytes).
double stage_flops(OpKind kind, const StageProfile& stage);
// Bytes its memory-bound kernels move (StageProfile::forward_memory_bytes):
// the forward's for F and Recompute, the backward's for B and BI.
double stage_memory_bytes(OpKind kind, const StageProfile& stage);
// Kernels it launches (StageProfile::forward_kernels), by the same parts.
int64_t stage_kernels(OpKind kind, const StageProfile& stage);

}  // namespace pipelab
