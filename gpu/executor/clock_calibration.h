// The arithmetic behind mapping CUDA event times onto the host clock (no CUDA
// here, so host tests check it without a GPU; event_timer.h does the calls).
//
// A calibration records a few events on an idle stream and reads
// steady_clock right after each completes. The first event is the anchor;
// each sample says "the anchor completed at host - elapsed(anchor, sample)",
// late by however long the host took to wake up. Wake-up delays are never
// negative, so the sample with the smallest (host - elapsed) is the best
// estimate: best_anchor_time().
//
// A long run re-anchors now and then (elapsed times are floats in
// milliseconds, whose precision drops as they grow). The new anchor's time
// predicted from the old anchor (old + elapsed(old, new)) and the measured
// one differ by clock drift plus leftover wake-up jitter; jumping to the
// measurement would shift the ops on either side of the re-anchor against
// each other, so slewed_anchor_time() moves from the prediction towards the
// measurement by a bounded step only.
//
// StreamMonotonicity keeps the times reported for one stream in stream
// order: an op never begins before the end of the op that ran before it on
// the same stream (a nested op, e.g. a tensor-parallel all-reduce inside a
// forward, lies inside its parent and is left alone).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <span>

namespace pipelab::gpu {

using HostTime = std::chrono::steady_clock::time_point;
using HostDuration = std::chrono::steady_clock::duration;

// A begin and an end on the host clock.
struct HostInterval {
  HostTime begin{};
  HostTime end{};
  double seconds() const { return std::chrono::duration<double>(end - begin).count(); }
};

// One calibration sample: when the host saw the event done, and the GPU time
// from the anchor to the event.
struct ClockSample {
  HostTime host{};
  HostDuration since_anchor{};
};

// Events recorded per calibration: enough for one of them to see a prompt
// wake-up, few enough to cost microseconds.
inline constexpr int kClockSamples = 5;

// The anchor's host time from the sample with the least wake-up delay:
// min over samples of (host - since_anchor). `samples` must not be empty.
HostTime best_anchor_time(std::span<const ClockSample> samples);

// How far one re-anchor may move the mapping: a fixed part for the leftover
// wake-up jitter, plus a drift allowance proportional to the time since the
// previous anchor (200 ppm: well above the drift of a GPU's and a host's
// oscillators, so real drift is always followed).
inline constexpr HostDuration kSlewFixed = std::chrono::microseconds(25);
inline constexpr int64_t kSlewPartsPerMillion = 200;
HostDuration max_slew(HostDuration since_previous_anchor);

// The new anchor's time: `predicted` (previous anchor + GPU time between the
// anchors) moved towards `measured` by at most `limit`.
HostTime slewed_anchor_time(HostTime predicted, HostTime measured, HostDuration limit);

class StreamMonotonicity {
 public:
  // An interval whose begin and end were recorded on `stream` as the
  // `begin_sequence`-th and `end_sequence`-th timing events of the issuing
  // thread (one counter over all its streams, so larger means later in each
  // stream's order). Calls come in end order. Returns the interval moved, if
  // needed, so that it begins no earlier than the previous op on the stream
  // ended (unless this op encloses it) and ends no earlier than it begins or
  // than that previous end.
  HostInterval clamp(uintptr_t stream, uint64_t begin_sequence, uint64_t end_sequence,
                     HostInterval interval);
  void clear() { last_.clear(); }

 private:
  struct LastEnd {
    uint64_t sequence = 0;
    HostTime time{};
  };
  std::map<uintptr_t, LastEnd> last_;  // per stream
};

}  // namespace pipelab::gpu
