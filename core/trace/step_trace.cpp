#include "core/trace/step_trace.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pipelab {

Trace step_trace(const Trace& trace, int step) {
  Trace one;
  one.source = trace.source;
  one.time_unit = trace.time_unit;
  one.schedule = trace.schedule;
  one.devices = trace.devices;
  // The step starts with its first compute op: a receive posted while the
  // device still finished the previous step is drawn from that moment on.
  double first_any = std::numeric_limits<double>::infinity();
  double first_compute = first_any;
  double end = -first_any;
  for (const TraceEvent& event : trace.events) {
    if (event.op.step != step) continue;
    one.events.push_back(event);
    first_any = std::min(first_any, event.t_begin);
    if (is_compute(event.op.kind)) first_compute = std::min(first_compute, event.t_begin);
    end = std::max(end, event.t_end);
  }
  if (one.events.empty()) return one;
  const double begin = std::isinf(first_compute) ? first_any : first_compute;
  for (TraceEvent& event : one.events) {
    event.t_begin = std::max(event.t_begin - begin, 0.0);
    event.t_end = std::max(event.t_end - begin, 0.0);
  }
  for (const MemorySample& sample : trace.memory) {
    if (sample.t < begin || sample.t > end) continue;
    one.memory.push_back(sample);
    one.memory.back().t -= begin;
  }
  for (const StepMetrics& metrics : trace.steps) {
    if (metrics.step != step) continue;
    one.steps.push_back(metrics);
    one.steps.back().t_end -= begin;
  }
  return one;
}

}  // namespace pipelab
