// The Mixture-of-Experts layer's per-element formulas (core/nn/moe_layer.h has
// the definition), for the host and the device, in the CPU layer's order of
// operations. The routing (core/nn/moe_routing.h) gives, per assignment
// a = token * top_k + choice, its slot (a row of the [E x capacity, dim]
// dispatch buffer, -1: dropped) and its combine weight; each slot row's
// assignment (-1: empty) is the inverse table, fill_slot_assignments.
//   dispatch_value   slot row s of the dispatch buffer: its token's values, 0 if empty
//   combine_value    y[t] = (sum over t's kept choices of weight x expert output) + x[t]
//   slot_gradient    d expert output [s] = weight x dy[token of s], 0 if empty
//   weight_gradient  d weight [a] = dy[token of a] . expert output [slot of a] (double sum)
//   token_gradient   dx[t] = (sum over t's kept choices of d dispatch [slot]
//                    + the gate's input gradient [t]) + dy[t]
// (The experts' part first, the residual last: MoeLayer::mix, then its residual.)
// combine_value's x and token_gradient's dy are the residual's: null for the
// experts' part alone (MoeLayer::mix and mix_backward, as a transformer_block
// with experts uses them).
#pragma once

#include <stdint.h>

#include "gpu/device/host_device.h"

namespace pipelab::gpu::moe_math {

// table[s] = the assignment holding slot s, or -1; `slots` rows in all.
inline void fill_slot_assignments(const int64_t* slot, int64_t assignments, int64_t* table,
                                  int64_t slots) {
  for (int64_t s = 0; s < slots; ++s) table[s] = -1;
  for (int64_t a = 0; a < assignments; ++a)
    if (slot[a] >= 0) table[slot[a]] = a;
}

PIPELAB_HOST_DEVICE inline float dispatch_value(const float* x, const int64_t* slot_assignment,
                                                int64_t top_k, int64_t dim, int64_t s,
                                                int64_t c) {
  const int64_t a = slot_assignment[s];
  return a < 0 ? 0.0f : x[(a / top_k) * dim + c];
}

// acc plus, over token t's kept choices in choice order, rows[slot][c],
// times the choice's weight (unless `weight` is null).
PIPELAB_HOST_DEVICE inline float add_kept_choices(float acc, const float* rows, const int64_t* slot,
                                                  const float* weight, int64_t top_k, int64_t dim,
                                                  int64_t t, int64_t c) {
  for (int64_t choice = 0; choice < top_k; ++choice) {
    const int64_t a = t * top_k + choice;
    if (slot[a] < 0) continue;
    const float value = rows[slot[a] * dim + c];
    acc += weight ? weight[a] * value : value;
  }
  return acc;
}

PIPELAB_HOST_DEVICE inline float combine_value(const float* x, const float* expert_out,
                                               const int64_t* slot, const float* weight,
                                               int64_t top_k, int64_t dim, int64_t t, int64_t c) {
  const float mixed = add_kept_choices(0.0f, expert_out, slot, weight, top_k, dim, t, c);
  return x ? mixed + x[t * dim + c] : mixed;
}

PIPELAB_HOST_DEVICE inline float slot_gradient(const float* dy, const int64_t* slot_assignment,
                                               const float* weight, int64_t top_k, int64_t dim,
                                               int64_t s, int64_t c) {
  const int64_t a = slot_assignment[s];
  return a < 0 ? 0.0f : weight[a] * dy[(a / top_k) * dim + c];
}

PIPELAB_HOST_DEVICE inline float weight_gradient(const float* dy, const float* expert_out,
                                                 const int64_t* slot, int64_t top_k, int64_t dim,
                                                 int64_t a) {
  if (slot[a] < 0) return 0.0f;
  const float* g = dy + (a / top_k) * dim;
  const float* out = expert_out + slot[a] * dim;
  double dot = 0;
  for (int64_t c = 0; c < dim; ++c) dot += static_cast<double>(g[c]) * out[c];
  return static_cast<float>(dot);
}

PIPELAB_HOST_DEVICE inline float token_gradient(const float* dy, const float* dispatch_grad,
                                                const float* gate_input_grad, const int64_t* slot,
                                                int64_t top_k, int64_t dim, int64_t t, int64_t c) {
  const float mixed = add_kept_choices(0.0f, dispatch_grad, slot, nullptr, top_k, dim, t, c) +
                      gate_input_grad[t * dim + c];
  return dy ? mixed + dy[t * dim + c] : mixed;
}

}  // namespace pipelab::gpu::moe_math
