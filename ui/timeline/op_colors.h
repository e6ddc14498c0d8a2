// One palette for every view and export: an op kind, a pipeline stage, a device
// or a memory category always gets the same colour, so a student who learns
// "blue is forward" on the timeline can read the legend-free charts too.
#pragma once

#include <QBrush>
#include <QColor>

#include "core/schedule/op.h"
#include "core/trace/trace_events.h"

namespace pipelab {

// F blue, B green (BI light green, BW dark green), U orange, recompute purple,
// communication greys, offload/reload brown.
QColor op_role_color(OpColorRole role);
QColor op_color(OpKind kind);  // its kind's colour role's

// Text drawn on top of a bar of `background`: black or white, whichever reads better.
QColor text_color_on(const QColor& background);

// Idle time: light red, hatched.
QColor bubble_color();
QBrush bubble_brush();

// Pipeline stages (layer table rows) and devices (memory curves).
QColor stage_color(int stage);
QColor device_color(int device);

QColor memory_category_color(MemoryCategory category);

// Weight versions (the strip under an asynchronous schedule's bars): a cycle
// of light colours unlike the op colours, so consecutive versions differ.
QColor weight_version_color(int version);

}  // namespace pipelab
