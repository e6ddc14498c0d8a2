// Clock offsets between the processes of one run, so rank 0 can draw every
// rank's events on its own clock. Rank 0 pings a rank several times: it reads
// its clock when it sends (sent), the rank answers with its clock's reading
// (remote), rank 0 reads its clock when the answer is back (received). If the
// answer was read halfway through the round trip, the rank's clock is ahead of
// rank 0's by remote - (sent + received) / 2; wherever in the round trip it
// was read, the error is at most half the round trip. The round with the
// shortest trip (the least queueing) bounds it best, as in NTP and Cristian's
// algorithm.
#pragma once

#include <vector>

namespace pipelab {

struct ClockSample {
  double sent = 0;      // rank 0's clock
  double remote = 0;    // the other rank's clock
  double received = 0;  // rank 0's clock
};

struct ClockOffset {
  double offset_s = 0;       // the rank's clock minus rank 0's
  double uncertainty_s = 0;  // the offset is within this of the truth: half the shortest round trip
};

// From at least one sample. Throws std::invalid_argument for none.
ClockOffset estimate_clock_offset(const std::vector<ClockSample>& samples);

// A rank's run-clock time on rank 0's run clock. Run clocks count from each
// rank's start (origin, in the rank's steady-clock seconds); a reading of 0 is
// "before the run started" on every rank and stays 0.
double on_reference_clock(double time, double origin, const ClockOffset& offset,
                          double reference_origin);

}  // namespace pipelab
