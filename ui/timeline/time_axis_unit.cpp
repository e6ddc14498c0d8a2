#include "ui/timeline/time_axis_unit.h"

#include <QCoreApplication>
#include <algorithm>

namespace pipelab {

TimeAxisUnit time_axis_unit(const Trace& trace) {
  if (trace.time_unit == "unit") return {1.0, QCoreApplication::translate("TimeAxisUnit", "time (units)")};
  double extent = 0;
  for (const TraceEvent& event : trace.events) extent = std::max(extent, event.t_end);
  for (const MemorySample& sample : trace.memory) extent = std::max(extent, sample.t);
  return time_axis_unit_for_seconds(extent);
}

TimeAxisUnit time_axis_unit_for_seconds(double extent) {
  if (extent > 0 && extent < 2e-3) return {1e6, QCoreApplication::translate("TimeAxisUnit", "time (µs)")};
  if (extent >= 5.0) return {1.0, QCoreApplication::translate("TimeAxisUnit", "time (s)")};
  return {1e3, QCoreApplication::translate("TimeAxisUnit", "time (ms)")};
}

}  // namespace pipelab
