#include "core/sim/bubble_formula.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace pipelab {
namespace {

void check_counts(int p, int m, int v) {
  if (p < 1)
    throw std::invalid_argument("bubble formula: p = " + std::to_string(p) + " must be >= 1");
  if (m < 1)
    throw std::invalid_argument("bubble formula: m = " + std::to_string(m) + " must be >= 1");
  if (v < 1)
    throw std::invalid_argument("bubble formula: v = " + std::to_string(v) + " must be >= 1");
}

// The makespan of PipeLab's zb-h1 order (zb_h1.cpp) with free communication:
// the longest of the paths through its dependency graph (derivation in the header).
double zb_h1_makespan(int p, int m, const UnitCosts& c) {
  const double f = c.f, b = c.b, w = c.w;
  if (m >= p) return m * (f + b + w) + (p - 1) * std::max({f + b - w, f, b});
  const double last_stage_first = (p - 1) * f + m * (f + b);
  return std::max({last_stage_first + b + m * w,             // stage p-2's BWs after its last BI
                   last_stage_first + (p - 1) * b + w,       // last BI chain, then stage 0's BW
                   p * f + (p - 1) * b + m * (b + w)});      // stage 0's BI, BW pairs
}

// The idle time ZB-V leaves per device (the paper's table, as ZB-H2):
// (p-1)(f+b-2w), never negative; f, b, w are a device's costs per micro-batch
// (both chunks together). 0 when f = b = w.
double zb_v_idle(int p, const UnitCosts& c) { return (p - 1) * std::max(0.0, c.f + c.b - 2 * c.w); }

// The idle time of PipeLab's dualpipev order (PyTorch's ScheduleDualPipeV,
// dualpipe_v.cpp) per device, with f, b, w one chunk's costs (a fused B costs
// b + w); derivation in the header.
double dualpipe_v_idle(int p, const UnitCosts& c) {
  const double f = c.f, b = c.b, w = c.w;
  const double per_hop = std::max({2 * b - w, 2 * f - 2 * w, f, b, f + b - w, 2 * f - w - b});
  return (p - 1) * per_hop - std::max(0.0, std::min(f, (p - 1) * (b - f)));
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string fixed3(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

}  // namespace

double theoretical_bubble(ScheduleKind kind, int p, int m, int v, const UnitCosts& c) {
  check_counts(p, m, v);
  switch (kind) {
    case ScheduleKind::GPipe:
    case ScheduleKind::OneFOneB:
      return double(p - 1) / double(m + p - 1);
    case ScheduleKind::Interleaved1F1B:
      // v*max(m,p)+min(m,p)-1 slots of a chunk's f+b (derivation in the header).
      return 1 - double(v * m) / double(v * std::max(m, p) + std::min(m, p) - 1);
    case ScheduleKind::ZeroBubbleH1: {
      const double makespan = zb_h1_makespan(p, m, c);
      return makespan > 0 ? 1 - m * (c.f + c.b + c.w) / makespan : 0.0;
    }
    case ScheduleKind::ZeroBubbleV: {
      const double idle = zb_v_idle(p, c);
      const double busy = m * (c.f + c.b + c.w);
      return idle + busy > 0 ? idle / (busy + idle) : 0.0;
    }
    case ScheduleKind::DualPipeV: {
      const double idle = dualpipe_v_idle(p, c);
      const double busy = 2 * m * (c.f + c.b + c.w);
      return idle + busy > 0 ? idle / (busy + idle) : 0.0;
    }
    case ScheduleKind::PipeDream:
    case ScheduleKind::PipeDream2BW:
    case ScheduleKind::PipeMare:
      return 0.0;
  }
  return 0.0;
}

std::string bubble_formula_text(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::GPipe:
    case ScheduleKind::OneFOneB:
      return "(p-1)/(m+p-1)";
    case ScheduleKind::Interleaved1F1B:
      return "(p-1)/(v*m+p-1) for m>=p, 1-v*m/(v*p+m-1) for m<p";
    case ScheduleKind::ZeroBubbleH1:
      return "1-m(f+b+w)/T, T = m(f+b+w)+(p-1)max(f+b-w,f,b) for m>=p";
    case ScheduleKind::ZeroBubbleV:
      return "(p-1)(f+b-2w)/(m(f+b+w)+(p-1)(f+b-2w))";
    case ScheduleKind::DualPipeV:
      return "I/(2m(f+b+w)+I), I = (p-1)max(2b-w,2f-2w,f,b,f+b-w,2f-w-b)-max(0,min(f,(p-1)(b-f)))";
    case ScheduleKind::PipeDream:
    case ScheduleKind::PipeDream2BW:
    case ScheduleKind::PipeMare:
      return "0 (steady state)";
  }
  return "";
}

std::string bubble_formula_filled(ScheduleKind kind, int p, int m, int v, const UnitCosts& c) {
  const double value = theoretical_bubble(kind, p, m, v, c);
  const std::string P = std::to_string(p);
  const std::string M = std::to_string(m);
  switch (kind) {
    case ScheduleKind::GPipe:
    case ScheduleKind::OneFOneB:
      return "(" + P + "-1)/(" + M + "+" + P + "-1) = " + fixed3(value);
    case ScheduleKind::Interleaved1F1B: {
      const std::string V = std::to_string(v);
      if (m < p) return "1-" + V + "*" + M + "/(" + V + "*" + P + "+" + M + "-1) = " + fixed3(value);
      return "(" + P + "-1)/(" + V + "*" + M + "+" + P + "-1) = " + fixed3(value);
    }
    case ScheduleKind::ZeroBubbleH1: {
      return "1-" + M + "(" + number(c.f) + "+" + number(c.b) + "+" + number(c.w) + ")/" +
             number(zb_h1_makespan(p, m, c)) + " = " + fixed3(value);
    }
    case ScheduleKind::ZeroBubbleV: {
      const std::string idle =
          "(" + P + "-1)(" + number(c.f) + "+" + number(c.b) + "-2*" + number(c.w) + ")";
      return idle + "/(" + M + "(" + number(c.f) + "+" + number(c.b) + "+" + number(c.w) + ")+" +
             idle + ") = " + fixed3(value);
    }
    case ScheduleKind::DualPipeV: {
      const std::string idle = number(dualpipe_v_idle(p, c));
      return idle + "/(2*" + M + "(" + number(c.f) + "+" + number(c.b) + "+" + number(c.w) + ")+" +
             idle + ") = " + fixed3(value);
    }
    case ScheduleKind::PipeDream:
    case ScheduleKind::PipeDream2BW:
    case ScheduleKind::PipeMare:
      return "0 (steady state) = " + fixed3(value);
  }
  return "";
}

}  // namespace pipelab
