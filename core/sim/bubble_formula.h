// Textbook bubble fractions of the pipeline schedules, for uniform stages and
// free communication: the share of devices x makespan spent idle.
//
//   gpipe, 1f1b         (p-1)/(m+p-1)
//   interleaved-1f1b    (p-1)/(v*m+p-1) for m >= p, v chunks per device;
//                       1 - v*m/(v*p+m-1) for m < p
//   zb-h1               1 - m(f+b+w) / T, T the makespan below
//   zb-v                (p-1)(f+b-2w) / (m(f+b+w) + (p-1)(f+b-2w))
//   dualpipev           I / (2m(f+b+w) + I), I the idle time below
//   pipedream, 2bw,     0 in steady state
//   pipemare
//
// Interleaved 1F1B, exactly as PipeLab orders it (core/schedule/
// interleaved_1f1b.cpp, PyTorch's rounds), with free communication and any
// f, b per chunk: the makespan is T = (v max(m,p) + min(m,p) - 1)(f+b). With
// m >= p, each device's v m passes plus the (p-1)(f+b) of the fill and the
// drain, whether or not m is a multiple of p (the rounds of m / R micro-batches,
// R = m / p rounded down, are at least p long, so a device never waits inside
// one): Megatron's (p-1)/(v*m+p-1). With m < p there is one round, shorter
// than the pipeline: the first micro-batch's forward and backward cross all
// v p stages and the other m - 1 add one pass each, so the devices wait
// inside every chunk; at m = 1 the whole run is one chain. Checked against
// the simulator for p in 1..8, v in 1..4, every m up to 5p that the rounds
// accept, and several f, b.
//
// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", 2023), exactly as
// PipeLab orders it (core/schedule/zb_h1.cpp), with free communication. T is
// the longest path through the order's dependency graph (F after the previous
// stage's F, BI after the next stage's BI, each device in its order):
//   m >= p:  T = m(f+b+w) + (p-1) max(f+b-w, f, b)
//   m <  p:  T = max((p-1)f + m(f+b) + b + m w,       stage p-2 ends on its m BWs
//                    (p-1)f + m(f+b) + (p-1)b + w,    the last BI chain, stage 0's BW
//                    p f + (p-1)b + m(b+w))           stage 0's m BI, BW pairs
// With w <= f+b and w >= min(f, b) the m >= p case is the paper's idle time of
// (p-1)(f+b-w) per device; with f = b = w it is (p-1)/(3m+p-1), a third of
// 1F1B's. A larger w, or m < p, leaves more idle time. Checked against the
// simulator for p in 2..8, m in 1..3p and f, b, w in {1, 2, 3}.
//
// ZB-V (same paper, section 6): two chunks per device in a V, so the first
// device also runs the last stage and the warm-up and drain are half as long
// in time; the paper's bubble is (p-1)(f+b-2w) per device, with f, b, w a
// device's costs per micro-batch (both chunks together): 0 when f = b = w, in
// the steady state. It assumes m >= 2p - 1 micro-batches; with fewer the
// pipeline never fills and the simulator's measured value is the one to read.
//
// DualPipeV (DeepSeek-V3 report, section 3.2; PyTorch's ScheduleDualPipeV),
// exactly as PipeLab orders it (core/schedule/dualpipe_v.cpp), with free
// communication; f, b, w are one chunk's costs (a fused B costs b + w), so a
// device is busy 2m(f+b+w). Every hop of the fill and the drain adds the
// longest of six dependency chains of the order, and when b > f the drain
// starts up to f earlier:
//   I = (p-1) max(2b-w, 2f-2w, f, b, f+b-w, 2f-w-b) - max(0, min(f, (p-1)(b-f)))
// for every m >= 2p (the order's steady phase grows with m, its ends do not).
// Each of the six terms is the critical path for some costs. With f = b = w
// it is (p-1)f, a sixth of the idle time 1F1B leaves on the same model (one
// stage per device costing 2f, 2b, 2w). The terms were read off the simulated
// critical paths and the whole expression checked against the simulator for p
// in 1..7, m in {2p, 2p+1, 3p+1} and f, b from 0.5 to 5, w from 0 to 4.
//
// PipeDream, PipeDream-2BW and PipeMare never flush: in steady state every device is
// always busy, so the formula is 0. A simulated finite window still shows the
// fill and drain at its ends; the simulator reports that measured value.
#pragma once

#include <string>

#include "core/plan/parallel_plan.h"
#include "core/sim/cost_model.h"

namespace pipelab {

// p pipeline devices, m micro-batches, v chunks per device (interleaved only).
// Only zb-h1, zb-v and dualpipev read the unit costs (f, b, w); u and comm are taken as 0.
// Throws std::invalid_argument when p, m or v is below 1.
double theoretical_bubble(ScheduleKind kind, int p, int m, int v, const UnitCosts& c);

// The symbolic formula, e.g. "(p-1)/(m+p-1)".
std::string bubble_formula_text(ScheduleKind kind);

// The formula with numbers in, e.g. "(4-1)/(8+4-1) = 0.273". zb-h1, zb-v and
// dualpipev use the unit costs given (pass the ones the simulation used, SimulationResult::
// formula_costs; f = b = w = 1 by default), e.g. "1-8(1+1+1)/27 = 0.111".
std::string bubble_formula_filled(ScheduleKind kind, int p, int m, int v,
                                  const UnitCosts& c = UnitCosts{});

}  // namespace pipelab
