// The device-to-device path of a group's collectives (device_group.h), worked
// out on the host as a list of steps that one stream runs in order: copies
// between the members' tensors and a scratch buffer, and additions. Pure
// arithmetic, no CUDA: host tests check the layouts, and that the results
// equal the CPU backend's collectives bit for bit where those define an order.
//
// Every collective works in place on each member's `values` floats; the
// layouts are the CPU backend's (core/comm/all_to_all.h, ring_allreduce.h),
// the values cut into as many equal slices as there are members:
//   all-reduce      every member gets the sum, in the CPU ring's order: the
//                   values cut into n chunks (their sizes may differ by one),
//                   chunk c added up in the scratch from member c round to
//                   member c - 1 (mod n), then copied to every member
//   all-to-all      member r's slice j goes to member j's slice r (member r's
//                   slice r stays); the pairs swap through the scratch
//   all-gather      member r's slice r goes to every other member's slice r
//   reduce-scatter  member r's slice r becomes the sum of every member's
//                   slice r, in the CPU ring's order: members r + 1, r + 2,
//                   ..., r (mod n) added up in the scratch, then copied back;
//                   the other slices keep their values
// Every addition's target is the scratch, which the stream's GPU holds (the
// runner brings a source from another GPU over first).
#pragma once

#include <cstdint>
#include <vector>

namespace pipelab::gpu {

// The collectives a group runs, in one process (device_group.h) or between
// ranks (rank_comm_plan.h).
enum class GroupCollective { AllReduce, AllToAll, AllGather, ReduceScatter };
const char* group_collective_name(GroupCollective collective);

struct CollectiveStep {
  static constexpr int kScratch = -1;  // a member index meaning the scratch buffer
  enum class Kind { Copy, Add };       // Add: target += source
  Kind kind = Kind::Copy;
  int from = 0;  // member, or kScratch
  int64_t from_offset = 0;
  int to = 0;  // member, or kScratch
  int64_t to_offset = 0;
  int64_t count = 0;
};

struct CollectiveSteps {
  std::vector<CollectiveStep> steps;
  int64_t scratch_values = 0;  // the scratch buffer's size
};

// The steps of `collective` over `members` members of `values` floats each.
// Throws std::invalid_argument when members < 1, or when a collective that
// cuts slices gets values that `members` does not divide.
CollectiveSteps collective_steps(GroupCollective collective, int members, int64_t values);

}  // namespace pipelab::gpu
