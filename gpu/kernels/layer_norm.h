// Layer-norm kernels over row-major [rows, width] (core/nn/layer_norm.h has the
// math; eps = 1e-5, biased variance). One block per row; row statistics and
// the backward's row sums accumulate in double, as the CPU does.
//   layer_norm_forward          y = (x - mean) * rstd * gain + bias; also writes
//                               mean and rstd = 1/sqrt(var + eps) per row when
//                               those pointers are not null
//   layer_norm_statistics       just mean and rstd per row
//   layer_norm_backward_input   dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)),
//                               with xhat = (x - mean) rstd and dxhat = dy gain
//   layer_norm_backward_weight  dgain += sum over rows of dy xhat; dbias += sum of dy;
//                               `scratch` holds 2 column_partial_floats(rows, width)
//                               (column_reduce.h)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pipelab::gpu::kernels {

inline constexpr double kLayerNormEpsilon = 1e-5;

void layer_norm_forward(const float* x, const float* gain, const float* bias, float* y, float* mean,
                        float* rstd, int64_t rows, int64_t width, cudaStream_t stream);
void layer_norm_statistics(const float* x, float* mean, float* rstd, int64_t rows, int64_t width,
                           cudaStream_t stream);
void layer_norm_backward_input(const float* x, const float* dy, const float* gain,
                               const float* mean, const float* rstd, float* dx, int64_t rows,
                               int64_t width, cudaStream_t stream);
void layer_norm_backward_weight(const float* x, const float* dy, const float* mean,
                                const float* rstd, float* dgain, float* dbias, int64_t rows,
                                int64_t width, float* scratch, cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
