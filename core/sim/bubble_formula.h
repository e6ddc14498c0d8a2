// Textbook bubble fractions of the pipeline schedules, for uniform stages and
// free communication: the share of devices x makespan spent idle.
//
//   gpipe, 1f1b         (p-1)/(m+p-1)
//   interleaved-1f1b    (p-1)/(v*m+p-1)          v chunks per device
//   zb-h1               (p-1)(f+b-w) / (m(f+b+w) + (p-1)(f+b-w))
//   zb-v                (p-1)(f+b-2w) / (m(f+b+w) + (p-1)(f+b-2w))
//   pipedream, 2bw      0 in steady state
//
// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", 2023): splitting the
// backward lets each stage start its input gradient as soon as the next stage's
// input gradient arrives (b, not b + w, per hop), and the deferred weight
// gradients fill the tail, so each device idles (p-1)(f+b-w) instead of
// 1F1B's (p-1)(f+b+w). Over a makespan of busy time m(f+b+w) plus that idle
// time this is the fraction above; with f = b = w it is (p-1)/(3m+p-1), a
// third of 1F1B's idle time. It holds for w <= f + b (below, 0 is returned
// for larger w rather than a negative number).
//
// ZB-V (same paper, section 6): two chunks per device in a V, so the first
// device also runs the last stage and the warm-up and drain are half as long
// in time; the paper's bubble is (p-1)(f+b-2w) per device, with f, b, w a
// device's costs per micro-batch (both chunks together): 0 when f = b = w, in
// the steady state. It assumes m >= 2p - 1 micro-batches; with fewer the
// pipeline never fills and the simulator's measured value is the one to read.
//
// PipeDream and PipeDream-2BW never flush: in steady state every device is
// always busy, so the formula is 0. A simulated finite window still shows the
// fill and drain at its ends; the simulator reports that measured value.
#pragma once

#include <string>

#include "core/plan/parallel_plan.h"
#include "core/sim/cost_model.h"

namespace pipelab {

// p pipeline devices, m micro-batches, v chunks per device (interleaved only).
// Only zb-h1 and zb-v read the unit costs (f, b, w); u and comm are taken as 0.
// Throws std::invalid_argument when p, m or v is below 1.
double theoretical_bubble(ScheduleKind kind, int p, int m, int v, const UnitCosts& c);

// The symbolic formula, e.g. "(p-1)/(m+p-1)".
std::string bubble_formula_text(ScheduleKind kind);

// The formula with numbers in, e.g. "(4-1)/(8+4-1) = 0.273". zb-h1 and zb-v use
// the unit costs given (f = b = w = 1 by default).
std::string bubble_formula_filled(ScheduleKind kind, int p, int m, int v,
                                  const UnitCosts& c = UnitCosts{});

}  // namespace pipelab
