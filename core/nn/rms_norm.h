// RMSNorm (Zhang and Sennrich 2019; LLaMA's norm): scales each row by the
// inverse of its root mean square, then by a learnable gain (no mean removal,
// no bias):
//   y = x / sqrt(mean(x^2) + eps) * gain,   eps = 1e-5
// eps sits inside the square root, as in PyTorch's nn.RMSNorm and as
// LayerNormLayer adds it to the variance (layer_norm.h), with the same value.
//
// Kernels over caller-allocated tensors (x, dy, y, dx all [rows, width], gain
// and its gradient [1, width]), so a Transformer block can run them without
// allocating. Like the layer norm, the backward recomputes each row's
// 1 / rms from x (one cheap pass) instead of keeping it per micro-batch.
#pragma once

#include "core/nn/tensor.h"

namespace pipelab {

inline constexpr double kRmsNormEpsilon = 1e-5;

void rms_norm_forward(const Tensor& x, const Tensor& gain, Tensor& y);

// With r = 1 / rms, xhat = x r and dxhat = dy * gain, per row:
//   dx = r * (dxhat - xhat * mean(dxhat * xhat))
void rms_norm_backward_input(const Tensor& x, const Tensor& gain, const Tensor& dy, Tensor& dx);

// gain_grad += sum over rows of dy * xhat (accumulates, like every weight gradient).
void rms_norm_backward_weight(const Tensor& x, const Tensor& dy, Tensor& gain_grad);

}  // namespace pipelab
