// Op matching: which communication ops of a schedule pair up.
//
//  - A SendActivation on stage s (device d) goes to the RecvActivation on stage
//    s+1 with the same micro-batch and step, on the device of stage s+1 in d's
//    replica and shard; a SendGradient on stage s to the RecvGradient on s-1.
//  - An AllReduce is matched by order among its group's members: the k-th
//    tensor-parallel all-reduce of every device of a TP group (same replica and
//    pipeline rank) is one collective; likewise the k-th data-parallel one of a
//    DP group (same pipeline rank and shard).
//  - A PullWeights of step t waits for every PushGradient of step
//    t - staleness in its DP group (none when that step is before the window or
//    has no pushes in it).
//
// The validator checks a schedule against the rules below and reports every
// break; match_schedule_ops finds every op's partners once, so the simulator
// and the runtime's step boundaries never search.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/plan/device_layout.h"
#include "core/schedule/schedule.h"

namespace pipelab {

// The stage at the other end of a send or receive (the kind's
// peer_stage_offset from op.stage); its device is the layout's pipeline_peer.
int message_peer_stage(const Op& op);

// Collective groups of a layout, numbered 0 .. dp*pp*cp-1 for the
// tensor-parallel ones (one per replica, pipeline rank and context rank,
// members: its shards), then the data-parallel ones (one per pipeline rank
// and shard, members: its replicas and their context ranks, which all hold
// the same weights), then the expert-parallel ones (one per group of ep
// consecutive replicas, pipeline rank, shard and context rank, members: those
// replicas; none when ep = 1), then the context-parallel ones (one per
// replica, pipeline rank and shard, members: its context ranks; none when
// cp = 1).
inline constexpr std::array<CommGroup, 4> kCollectiveGroups = {
    CommGroup::TensorParallel, CommGroup::DataParallel, CommGroup::ExpertParallel, CommGroup::ContextParallel};
const char* comm_group_text(CommGroup group);  // "tensor-parallel", ...
int collective_group_of(const DeviceLayout& layout, CommGroup group, int device);
// Every group of one kind, in group order, each its members in device order.
std::vector<std::vector<int>> collective_groups(const DeviceLayout& layout, CommGroup group);

// One collective: the devices taking part, in device order.
struct CollectiveGroup {
  std::vector<int> members;
};

struct ScheduleMatching {
  // Ops are numbered globally: device d's ops are first_op[d] .. first_op[d+1]-1.
  std::vector<int> first_op;
  // Per global op, what it is matched with (-1 for ops that need nothing):
  //   Send          the global index of its receive
  //   Recv          its message number, 0 .. message_count-1
  //   AllReduce     its collective instance (index into group_of_collective)
  //   PushGradient  the push slot (DP group, step) it fills
  //   PullWeights   the push slot it waits for (-1: none, no wait)
  std::vector<int> partner;
  int message_count = 0;
  // Per collective instance: which group it runs on (index into groups).
  std::vector<int> group_of_collective;
  std::vector<CollectiveGroup> groups;
  std::vector<int> pushes_expected;  // per push slot

  int op_count() const { return first_op.empty() ? 0 : first_op.back(); }
};

// Throws std::invalid_argument naming the device and op when a receive has no
// send (or two), a send names the wrong peer, a collective's members disagree
// on how many they run, or an op's fields are out of range.
ScheduleMatching match_schedule_ops(const Schedule& schedule);

}  // namespace pipelab
