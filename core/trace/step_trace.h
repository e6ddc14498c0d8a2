// One training step cut out of a recorded run: its ops, memory and metrics,
// with the clock moved so the step starts at 0. What an animation or a slide
// of "one step" shows from a run of many (the first step also holds the
// warm-up: allocations, thread start).
#pragma once

#include "core/trace/trace_events.h"

namespace pipelab {

// The events whose op belongs to `step` (Op::step), the memory samples taken
// while they ran and the step's metrics, on a clock that starts with the step's
// first compute op (communication posted earlier, while a device still
// finished the previous step, is cut to start there too).
// Empty events when the trace has none of that step. Suits synchronous
// schedules, whose steps end in a flush; an asynchronous schedule's steps
// interleave, so one step's ops leave gaps that are other steps' work.
Trace step_trace(const Trace& trace, int step);

}  // namespace pipelab
