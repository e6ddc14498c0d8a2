#include "core/comm/clock_offset.h"

#include <stdexcept>

namespace pipelab {

ClockOffset estimate_clock_offset(const std::vector<ClockSample>& samples) {
  if (samples.empty()) throw std::invalid_argument("a clock offset needs at least one ping");
  const ClockSample* best = &samples.front();
  for (const ClockSample& sample : samples)
    if (sample.received - sample.sent < best->received - best->sent) best = &sample;
  ClockOffset offset;
  offset.offset_s = best->remote - (best->sent + best->received) / 2;
  offset.uncertainty_s = (best->received - best->sent) / 2;
  return offset;
}

double on_reference_clock(double time, double origin, const ClockOffset& offset,
                          double reference_origin) {
  if (time == 0) return 0;
  return time + (origin - offset.offset_s - reference_origin);
}

}  // namespace pipelab
