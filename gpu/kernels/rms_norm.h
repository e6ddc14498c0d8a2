// RMSNorm kernels over row-major [rows, width] (rms_norm_math.h has the
// formulas; core/nn/rms_norm.h the definition). One block per row; the row
// sums accumulate in double, as the CPU does. Like the layer norm's, the
// backward recomputes each row's 1 / rms from x instead of keeping it.
//   rms_norm_forward          y = x r gain
//   rms_norm_backward_input   dx = r (dy gain - x r mean(dy gain x r))
//   rms_norm_backward_weight  dgain += sum over rows of dy x r
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pipelab::gpu::kernels {

void rms_norm_forward(const float* x, const float* gain, float* y, int64_t rows, int64_t width,
                      cudaStream_t stream);
void rms_norm_backward_input(const float* x, const float* dy, const float* gain, float* dx,
                             int64_t rows, int64_t width, cudaStream_t stream);
// `rstd` is a [rows] scratch the caller provides (Workspace), `scratch`
// column_partial_floats(rows, width) more (column_reduce.h).
void rms_norm_backward_weight(const float* x, const float* dy, float* rstd, float* dgain,
                              int64_t rows, int64_t width, float* scratch, cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
