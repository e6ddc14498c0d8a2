// The app's name for a device of a trace, in the app's language:
// "device 1 · stage 1 · replica 0" (core's device_label, which exported files
// keep in English), with " · context N" when the run splits sequences over
// context-parallel ranks and " · shard N" when it splits stages into
// tensor-parallel shards.
#pragma once

#include <QString>

#include "core/trace/trace_events.h"

namespace pipelab {

QString device_row_label(const Trace& trace, int device);

}  // namespace pipelab
