// RankCommPlan: for a CUDA run over processes (core/runtime/process_share.h),
// which collective groups and message links between ranks can use NCCL
// instead of host staging (host_staging.h), and the NCCL communicators
// between ranks they need. Pure arithmetic, no CUDA or NCCL call: every rank
// computes the same plan from the same inputs, which is what NCCL's
// collective set-up calls need (host tests check it without a GPU).
//
// When NCCL: a group or link crosses ranks, has at most one virtual device on
// each rank (a rank runs all its devices on one GPU, and NCCL refuses two
// ranks on one GPU), and every rank of the run has a GPU of its own
// (`gpu_of_rank`: an identity per rank, e.g. host name and PCI bus id,
// gathered over MPI): not only the group's ranks, since the communicators
// are split from a world over every rank, whose ncclCommInitRank fails
// ("Duplicate GPU detected") when two of its ranks share a GPU. A link must
// also carry its messages in the same order at both ends (in_order_link):
// see point-to-point below. Otherwise: host staging, as before.
//
// Set-up (every rank, in the same order, before any worker starts): rank 0
// calls ncclGetUniqueId, the id is broadcast over MPI, every rank calls
// ncclCommInitRank(world, ranks, id, rank); then one ncclCommSplit of the
// world per communicator of the plan, in plan order, on every rank (a split
// is collective over its parent): color 0 and key = its position for the
// ranks in it, NCCL_SPLIT_NOCOLOR for the others (split_color, split_key).
// Then the warm-up (rank_warm_ups): one tiny operation per communicator
// this rank is in and per kind of traffic it carries, in plan order, so
// that NCCL makes its connections at set-up, not at a launch during the run
// (rank_world.h says why that matters and what NCCL connects when).
//
// Why the warm-up cannot deadlock: every rank walks the same list (the
// plan's communicators in index order, each with its kinds in the group's
// order), keeping the steps of communicators it is in, and waits for each
// step before the next, on one stream. Take the first step of that list not
// yet done: each of its communicator's ranks has done every earlier step it
// takes part in (they are earlier, so done), so it is waiting at this step
// or on its way to it without waiting for anything else; all of them arrive,
// and with their earlier steps finished on their streams, this step is at
// the head of every member's stream, so its kernels run together and it
// completes. By induction every step completes. (A rank that never comes
// stops the others at the set-up's timeout instead, naming the step.)
//
// One communicator per group and one per DIRECTION of a link, never shared:
// each has exactly one issuing virtual device (one worker thread) per rank,
// so the order of its operations is that device's schedule order on every
// rank. A shared communicator would take its operations in the order the
// threads of each process happen to issue them, which can differ between
// processes and hang.
//
// Collectives: each rank's member issues its part on its communication
// stream, ordered with events as DeviceGroup does, under the process's NCCL
// launch lock (comm_world.h); NCCL rank i is the
// group's member i (members are in rank order already), so the chunks of
// reduce-scatter and all-gather land where the in-process run puts them.
//
// Point-to-point (the cuda backend's SEND and RECV ops on a planned link):
// the launch lock of message_routes.h (both halves issued together in one
// process) cannot span processes. Instead, at its SEND op the sender posts
// the message's shape (shape_message) over the host transport, under the
// message's tag, then issues ncclSend on the (from, to) communicator; at its
// RECV op the receiver takes the shape from its host mailbox, makes a buffer
// of that shape and issues ncclRecv on the same communicator. Each end issues
// on a stream of that link alone, after (sender) or before (receiver, whose
// compute stream then waits for it) the compute stream's work, ordered with
// events as MessageRoutes does. Why this cannot deadlock:
//  - host threads: a SEND never waits for the receiver (the shape post is
//    asynchronous, and the link was connected at set-up, rank_world.h, so
//    issuing ncclSend does not wait for the peer), and a RECV waits only for
//    the shape, which its sender posts at its SEND op: the host waits are
//    those of the staged path, which the schedule orders (its sends are
//    asynchronous, as in the simulator);
//  - GPU: NCCL completes one communicator's operations in issue order on
//    each rank, so with sends and receives in the same order (in_order_link)
//    the k-th send meets the k-th receive; a receive waits for nothing on
//    its GPU (fresh memory, its own stream), so once both halves are issued
//    the transfer completes, and a blocked send or receive holds back only
//    later messages of its own link, which the schedule's order at both
//    ends already puts after it.
//
// Caveat (NCCL, "Using multiple NCCL communicators concurrently"): kernels of
// different communicators on one GPU are not guaranteed to run concurrently;
// NCCL asks that they be issued in a consistent order across ranks or in
// separate epochs. This matters whenever one GPU has transfers of several
// communicators between ranks in flight: a pipeline stage's receive from the
// stage before and its send to it (two link communicators), a link beside a
// data-parallel all-reduce, or two devices per rank each in its own group.
// The process's launch lock orders their launches within the rank, not
// across ranks; each such kernel uses a few of the GPU's many SMs, so they
// should run side by side, but NCCL does not promise it. Host staging does
// not have this risk; whether NCCL's launch-order option
// (NCCL_LAUNCH_ORDER_IMPLICIT) is needed is to be checked on two GPUs.
// Compiled, never run: needs two GPUs and MPI.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/schedule/schedule.h"
#include "gpu/comm/collective_steps.h"

namespace pipelab::gpu {

enum class RankPath {
  InProcess,    // every device here: the in-process paths (CommWorld)
  HostStaging,  // crosses ranks through pinned host memory and the CPU transport
  Nccl,         // crosses ranks on NCCL
};

// A collective group of the run: its virtual devices in rank order and the
// collectives it runs (device_mapping.h's CollectiveGroups::with_collectives).
struct CollectiveGroup {
  std::vector<int> members;
  std::vector<GroupCollective> collectives;
};

// A communicator between ranks, split from the world over every rank.
struct RankCommunicator {
  std::vector<int> ranks;    // NCCL rank i is process rank ranks[i]
  std::vector<int> devices;  // the virtual device that issues on it on ranks[i]
  // A link's (sender NCCL rank 0, receiver rank 1), not a group's.
  bool point_to_point = false;
  std::vector<GroupCollective> collectives;  // a group's; none for a link
};

struct RankRoute {
  RankPath path = RankPath::InProcess;
  int communicator = -1;  // Nccl: index into RankCommPlan::communicators
};

struct RankCommPlan {
  std::vector<RankCommunicator> communicators;  // split from the world in this order
  std::vector<RankRoute> groups;                // per collective group, in input order
  std::map<std::pair<int, int>, RankRoute> links;  // per directed link (from, to)

  // Whether the ranks make the world communicator (only when some route is Nccl).
  bool needs_world() const { return !communicators.empty(); }
};

// The directed links (sender, receiver) a lowered schedule sends messages on.
std::vector<std::pair<int, int>> directed_message_links(const Schedule& schedule);

// Whether the messages `from` sends to `to` are received in the order they
// are sent (compared by message tag).
bool in_order_link(const Schedule& schedule, int from, int to);

// `groups`: the collective groups (device_mapping.h's collective_groups, in
// rank order); `rank_of_device`: the process rank of each virtual device;
// `gpu_of_rank`: the identity of each rank's GPU; `nccl`: whether NCCL is
// built in. Throws std::invalid_argument when a device or rank is out of
// range.
RankCommPlan plan_rank_communicators(const Schedule& schedule,
                                     const std::vector<CollectiveGroup>& groups,
                                     const std::vector<int>& rank_of_device,
                                     const std::vector<std::string>& gpu_of_rank, bool nccl);

// The links on NCCL with an end among devices first_device ..
// first_device + device_count - 1 (one rank's), each with its communicator:
// the ends that rank issues sends or receives for.
std::map<std::pair<int, int>, int> nccl_links_of(const RankCommPlan& plan, int first_device,
                                                 int device_count);

// One step of a rank's warm-up at set-up: a tiny operation on one of its
// communicators. A link's first message (one float) is sent by its NCCL
// rank 0 and received by rank 1; a group runs each of its collectives once
// (one float per member).
struct RankWarmUp {
  enum class Kind { Send, Receive, Collective };
  int communicator = -1;
  Kind kind = Kind::Collective;
  GroupCollective collective = GroupCollective::AllReduce;  // Kind::Collective's
  bool operator==(const RankWarmUp&) const = default;
};

// `rank`'s warm-up steps, in the order every rank takes them (see above):
// the plan's communicators in index order, those `rank` is in, a group's
// collectives in its order.
std::vector<RankWarmUp> rank_warm_ups(const RankCommPlan& plan, int rank);

// "warming up communicator 3 (the all-gather of ranks 0, 2)" or
// "warming up communicator 5 (the link from rank 0 to rank 1)": a set-up
// step's name in RankWorld's messages.
std::string describe_warm_up(const RankCommPlan& plan, const RankWarmUp& step);

// How many NCCL communicators `rank` holds on its GPU: the world (when the
// plan needs it) and every communicator of the plan it is in (what RankWorld
// makes; the memory pre-flight counts their buffers).
int communicators_on_rank(const RankCommPlan& plan, int rank);

// ncclCommSplit's arguments on `rank` for the plan's communicator `index`:
// the color (kNoColor when the rank is not in it) and the key (its position).
inline constexpr int kNoColor = -1;  // NCCL_SPLIT_NOCOLOR's value
int split_color(const RankCommPlan& plan, int index, int rank);
int split_key(const RankCommPlan& plan, int index, int rank);

// A message on an NCCL link: its shape travels first over the host transport
// (the receiver sizes its buffer from it), as two floats, exact below 2^24.
// Throws std::invalid_argument for a dimension that is not, and for a shape
// message that is not two such whole numbers.
std::array<float, 2> shape_message(int64_t rows, int64_t cols);
std::pair<int64_t, int64_t> message_shape(std::span<const float> message);

// "between ranks: 2 groups and 4 links on NCCL, 1 group and 0 links staged
// through host memory" (links left out when the plan has none): the launch
// line's words for the plan.
std::string describe_rank_paths(const RankCommPlan& plan);

}  // namespace pipelab::gpu
