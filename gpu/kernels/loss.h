// Loss kernels (core/nn/loss.h has the definitions), one block per row, in
// double like the CPU: each writes the row's loss to row_loss[r] (double) and,
// when `grad` is not null, dLoss/d(output) times `scale` into grad.
//   softmax_cross_entropy  loss = logsumexp(z) - z[label] (max subtracted);
//                          grad = scale (softmax(z) - onehot(label));
//                          row_correct[r] = 1 if the first maximal logit is
//                          the label, else 0. Labels must be in [0, classes)
//                          (checked on the host); a label outside gives a NaN loss.
//   mean_squared_error     loss = sum_j (y_j - t_j)^2 / width;
//                          grad = scale 2 (y - t) / width
// The caller sums row_loss in row order, as the CPU does, so loss sums match.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pipelab::gpu::kernels {

void softmax_cross_entropy(const float* logits, const int32_t* labels, int64_t rows,
                           int64_t classes, double scale, float* grad, double* row_loss,
                           int32_t* row_correct, cudaStream_t stream);
void mean_squared_error(const float* output, const float* target, int64_t rows, int64_t width,
                        double scale, float* grad, double* row_loss, cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
