// Timeline as text: the pipeline figures of the papers, as an ASCII grid.
//
//   slot  |0  |1  |2  |3  |4  |5  |6  |7  |...
//   dev 0 |F0 |F1 |F2 |F3 |   |   |   |B0     |...
//   dev 1 |   |F0 |F1 |F2 |F3 |   |B0     |...
//
// One row per device, one cell per `slot` time units. A compute op (F, B, BI,
// BW, U, Recompute) is one box over the slots it covers, labelled with its
// kind and micro-batch (chunk c > 0 of an interleaved schedule adds ".c"); an
// op that covers several slots is one wide box (with f = b = w = 1, B spans
// two). Empty cells are bubbles; communication is not drawn. Times are
// rounded to whole slots, so pick slot = the unit cost for exact pictures.
#pragma once

#include <string>

#include "core/trace/trace_events.h"

namespace pipelab {

// Throws std::invalid_argument for slot <= 0 or device_count < 0.
std::string format_timeline_grid(const Trace& trace, int device_count, double slot);

}  // namespace pipelab
