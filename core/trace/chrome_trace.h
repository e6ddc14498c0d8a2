// Chrome trace export: a Trace as Trace Event Format JSON, which Perfetto
// (ui.perfetto.dev) and chrome://tracing open.
//
// Layout of the output:
// - One process per device, named with the device's label and sorted by device
//   id. Its pid is device + 1 because Perfetto reserves pid and tid 0 for the
//   idle task.
// - Two threads per process: "compute" (F, B, BI, BW, U, Recompute and the
//   "bubble" slices between them) and "communication" (sends, receives,
//   all-reduces, offload/reload, push/pull). Perfetto keys threads by tid across
//   the whole file, so tids are unique: tid = pid * 10 (compute) and
//   pid * 10 + 1 (communication).
// - Ops are complete events ("X") named by op label ("F3", "B3@s1"), with the
//   kind name as category and the op's fields in args.
// - Memory is one counter ("C") named "memory" per sample with one arg per
//   category on the device, in bytes: chrome://tracing stacks them into one
//   chart of the device's total, Perfetto shows one track per category
//   ("memory weights", "memory activations", ...). A second counter, "memory
//   total", carries the sum (Perfetto does not stack counters), and a third,
//   "memory host", what offloading keeps in host memory.
// - Step metrics go to an extra "training" process: one counter per metric
//   ("loss", "accuracy", "val_loss", "val_accuracy", "samples_per_s"; arg
//   "value"), and a global instant event "step N" at each step's end with every
//   metric in args.
// Times are microseconds, rounded to the nanosecond: seconds x 1e6, or, for
// unit-cost traces (time_unit "unit"), 1 unit = 1000 us; the top-level
// "metadata" object says which. "metadata" comes after "traceEvents" because
// older Perfetto importers may stop reading after the metadata object.
// NaN values are written as null or left out, so the file is always valid JSON.
#pragma once

#include <ostream>

#include "core/trace/trace_events.h"

namespace pipelab {

void write_chrome_trace(const Trace& trace, std::ostream& out);

// How many trace microseconds one unit of trace.time_unit becomes:
// 1e6 for seconds, 1000 for abstract units.
double chrome_microseconds_per_unit(const Trace& trace);

// The pid and tids write_chrome_trace gives a device (see above).
int chrome_pid(int device);
int chrome_compute_tid(int device);
int chrome_communication_tid(int device);

}  // namespace pipelab
