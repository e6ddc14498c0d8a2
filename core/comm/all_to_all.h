// All-to-all over a group of devices (a moe layer's expert-parallel group),
// with real messages through the transport (transport.h), so members may live
// in other processes: the values are cut into n equal chunks; member r sends
// its chunk j to member j and puts member j's chunk r in its own chunk j (its
// own chunk r stays). Doing it twice gives back the original values.
#pragma once

#include <cstdint>
#include <span>

#include "core/comm/ring_allreduce.h"

namespace pipelab {

// In place; every member calls it with the same `collective` number and value
// count (a multiple of the group size). Throws RunStopped when the run stops
// while waiting.
void all_to_all(std::span<float> values, const RingGroup& group, int64_t collective);

}  // namespace pipelab
