// The unit a chart's time axis uses for a trace: µs for runs shorter than a
// few milliseconds, ms below a few seconds, s above; abstract units for
// unit-cost simulations. Timeline and memory charts pick it the same way.
#pragma once

#include <QString>

#include "core/trace/trace_events.h"

namespace pipelab {

struct TimeAxisUnit {
  double scale = 1e3;  // axis units per trace time unit
  QString label;       // "time (ms)"
};

// From the trace's unit and extent (its latest end time). An empty trace in
// seconds gets milliseconds, the usual size of a live run's steps.
TimeAxisUnit time_axis_unit(const Trace& trace);
// The same for a span of `extent` seconds (one step, say).
TimeAxisUnit time_axis_unit_for_seconds(double extent);

}  // namespace pipelab
