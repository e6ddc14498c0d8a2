#include "gpu/executor/clock_calibration.h"

#include <algorithm>
#include <cassert>

namespace pipelab::gpu {

HostTime best_anchor_time(std::span<const ClockSample> samples) {
  assert(!samples.empty());
  HostTime best = samples.front().host - samples.front().since_anchor;
  for (const ClockSample& sample : samples) best = std::min(best, sample.host - sample.since_anchor);
  return best;
}

HostDuration max_slew(HostDuration since_previous_anchor) {
  const HostDuration elapsed = std::max(since_previous_anchor, HostDuration::zero());
  return kSlewFixed + elapsed * kSlewPartsPerMillion / 1'000'000;
}

HostTime slewed_anchor_time(HostTime predicted, HostTime measured, HostDuration limit) {
  assert(limit >= HostDuration::zero());
  const HostDuration correction = std::clamp(measured - predicted, -limit, limit);
  return predicted + correction;
}

HostInterval StreamMonotonicity::clamp(uintptr_t stream, uint64_t begin_sequence,
                                       uint64_t end_sequence, HostInterval interval) {
  assert(begin_sequence < end_sequence);
  auto found = last_.find(stream);
  if (found != last_.end()) {
    const LastEnd& previous = found->second;
    // An op that began after the previous one ended follows it on the stream;
    // one that began before encloses it and keeps its begin.
    if (begin_sequence > previous.sequence)
      interval.begin = std::max(interval.begin, previous.time);
    interval.end = std::max(interval.end, previous.time);
  }
  interval.end = std::max(interval.end, interval.begin);
  LastEnd& last = last_[stream];
  if (end_sequence > last.sequence) last = {end_sequence, interval.end};
  return interval;
}

}  // namespace pipelab::gpu
