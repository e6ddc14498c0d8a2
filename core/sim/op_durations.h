// How long each measured op took by itself. A measured event spans its op's
// begin to end; under tensor parallelism the all-reduces a forward or backward
// runs happen inside it (Sequential calls them between the layers) and are
// reported as their own events, nested in the compute op's interval. A compute
// op's own time excludes them, so replay and calibration do not count the
// communication twice.
#pragma once

#include <vector>

#include "core/trace/trace_events.h"

namespace pipelab {

// One entry per event of `trace`, in the same order: seconds the op took by itself.
std::vector<double> own_durations(const Trace& trace);

}  // namespace pipelab
