// Ring all-reduce over a group of devices (the data-parallel replicas of a
// stage, or the tensor-parallel shards of one), with real messages through
// the transport (transport.h), so members may live in other processes.
//
// The n members sit on a ring; the values are cut into n chunks. A
// reduce-scatter of n - 1 steps passes partial sums to the next member (each
// adds what it receives), after which member r holds the full sum of chunk
// (r + 1) mod n; an all-gather of n - 1 more steps passes those finished
// chunks round the ring. Every finished chunk is computed once and copied, so
// every member ends with bit-identical values, and the result is a SUM (the
// loss scale 1 / global batch already makes the sum the mean gradient).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/comm/channel.h"
#include "core/comm/transport.h"
#include "core/nn/all_reduce.h"

namespace pipelab {

struct RingGroup {
  MessageKind kind = MessageKind::DataParallelChunk;
  std::vector<int> devices;          // members in ring order
  Transport* transport = nullptr;    // reaches the next member
  Mailbox* mailbox = nullptr;        // this member's own
  int rank = 0;                      // this member's index
  int size() const { return static_cast<int>(devices.size()); }
};

// Sums `values` over the group in place. Every member calls it with the same
// `collective` number (members run their collectives in the same order, so a
// per-group counter works) and the same value count. Throws RunStopped when
// the run stops while waiting.
void ring_all_reduce(std::span<float> values, const RingGroup& group, int64_t collective);

// Sequence parallelism's halves of it, in place on `values` cut into
// group.size() equal slices (the count must divide evenly), member r's being
// slice r (all_reduce.h's SequenceCollectives):
//  - reduce-scatter: afterwards member r's slice holds the sum of every
//    member's slice r (the other slices hold partial sums);
//  - all-gather: each member has written its own slice; afterwards every
//    slice holds its member's values.
// `collective` numbers every collective of the group, as for ring_all_reduce.
void ring_reduce_scatter(std::span<float> values, const RingGroup& group, int64_t collective);
void ring_all_gather(std::span<float> values, const RingGroup& group, int64_t collective);

// The all-gather, handing each slice to `arrived` as soon as it is in place:
// this member's own first, then r - 1, r - 2, ... as they come round the
// ring, each passed on already, so a caller that works on each slice there
// (context parallelism's ring attention) overlaps its work with the ring's
// next step.
void ring_all_gather_passing(std::span<float> values, const RingGroup& group, int64_t collective,
                             const SliceArrival& arrived);

}  // namespace pipelab
