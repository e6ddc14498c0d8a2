// SwiGLU (Shazeer 2020, the LLaMA feed-forward's gate): on an input of
// [rows, 2 f], the first f columns are the gate g and the last f the value u:
//   y = silu(g) * u,  silu(g) = g * sigmoid(g),  y is [rows, f]
//   dg = dy * u * sigmoid(g) * (1 + g * (1 - sigmoid(g))),  du = dy * silu(g)
// So the feed-forward's first linear outputs 2 f columns, [gate | up]. Under
// tensor parallelism a column-parallel shard holds its slice of the gate
// columns followed by the same slice of the up columns (gpt_block.h), so this
// kernel runs on a shard's local [rows, 2 f / tp] as it is.
//
// (GELU, PyTorch's tanh form, is activations.h's gelu_forward/gelu_backward.)
#pragma once

#include "core/nn/tensor.h"

namespace pipelab {

// x [rows, 2 f] -> y [rows, f].
void swiglu_forward(const Tensor& x, Tensor& y);
// dx [rows, 2 f] from x [rows, 2 f] and dy [rows, f]; overwrites dx.
void swiglu_backward(const Tensor& x, const Tensor& dy, Tensor& dx);

}  // namespace pipelab
