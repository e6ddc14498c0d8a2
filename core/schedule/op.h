// Op: one operation a device performs. A schedule is, per device, an ordered
// list of Ops; the simulator, the CPU executor and the CUDA executor all read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/schedule/op_kind.h"

namespace pipelab {

// Which devices a collective (an AllReduce, an AllToAll) spans.
// ExpertParallel: the ep replicas of one expert-parallel group (same pipeline
// rank and shard), which share a moe layer's experts. ContextParallel: the cp
// ranks that split one replica's sequence (same replica, pipeline rank and
// shard); attention passes K and V around them.
enum class CommGroup { None, TensorParallel, DataParallel, ExpertParallel, ContextParallel };
// "none", "tensor_parallel", "data_parallel", "expert_parallel",
// "context_parallel": how traces and run files name a group.
const char* comm_group_name(CommGroup group);
std::optional<CommGroup> parse_comm_group(const std::string& name);

struct Op {
  OpKind kind = OpKind::Forward;
  int device = 0;          // global device id (see core/plan/device_layout.h)
  int stage = 0;           // pipeline stage (virtual stage when chunks > 1)
  int chunk = 0;           // which of the device's chunks holds the stage
  int microbatch = -1;     // -1 when the op spans every micro-batch (U, DP all-reduce);
                           // pipedream's per-micro-batch U carries the B's micro-batch
  int step = 0;            // training step within the schedule's window
  int weight_version = 0;  // weight version the op reads (F, B, BI, BW, Recompute) or writes (U)
  int weight_delay = 0;    // B, Recompute: updates of the stage between the micro-batch's F and
                           // this op's read (pipemare: B reads newer weights than its F; 0 elsewhere)
  int peer = -1;           // Send/Recv: the other device
  CommGroup group = CommGroup::None;  // AllReduce / Push / Pull
  int layer = -1;     // a collective run inside a compute op (tensor-parallel, synced batch
                      // norm's): the layer it belongs to; -1 otherwise
  int64_t bytes = 0;  // payload of communication ops (0 when the model is unknown)
};

// A compact label for grids, tooltips and validator messages: kind name, then
// micro-batch, stage, and what else identifies the op, e.g. "F3 s1", "B3 s1",
// "U s1 v2", "SEND_ACT3 s1 to d2", "ALLREDUCE3 s1 tp L5", "F3 s1 t2" (step 2).
std::string op_label(const Op& op);

}  // namespace pipelab
