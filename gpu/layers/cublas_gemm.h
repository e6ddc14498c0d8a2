// GEMMs through cuBLAS on row-major matrices, and the three products of a
// linear layer (W stored [in, out] row-major, as core/nn/linear.h):
//   linear_forward          Y  = X W (+ b: Y is seeded with b, then beta = 1)
//   linear_backward_input   dX = dY W^T
//   linear_backward_weight  dW += X^T dY (beta = 1 accumulates), db += column sums of dY
// The backward is split so zero-bubble schedules can run BI and BW apart.
//
// cuBLAS is column-major. A row-major [r, c] matrix read as column-major is its
// transpose [c, r], so the row-major C = op(A) op(B) is computed as the
// column-major C^T = op(B)^T op(A)^T: swap the operands, keep each one's
// transpose flag, pass the row lengths as leading dimensions. No copies.
//
// Precision: FP32 by default (CUBLAS_DEFAULT_MATH); TF32 tensor cores as an
// option (CUBLAS_TF32_TENSOR_OP_MATH), about 1e-3 relative error.
// Mixed precision (training.precision = bf16-mixed): a linear product whose
// weight keeps a bf16 copy (DeviceTensor::keep_bf16_copy) reads that copy and
// its other input rounded to bf16, accumulates and writes float32
// (cublasGemmStridedBatchedEx, CUDA_R_16BF inputs, CUBLAS_COMPUTE_32F), as
// autocast and Megatron do; so does linear_backward_weight into a gradient
// marked DeviceTensor::accumulate_bf16_products (the float32 gradient keeps
// the sum). Other layers' GEMMs (the attention core's) pass GemmInputs.
#pragma once

#include <cublas_v2.h>

#include <cstdint>
#include <optional>
#include <string>

#include "gpu/memory/device_tensor.h"

namespace pipelab::gpu {

enum class GemmPrecision { Fp32, Tf32 };
const char* gemm_precision_name(GemmPrecision precision);  // "fp32", "tf32"
std::optional<GemmPrecision> parse_gemm_precision(const std::string& name);
// Sets the handle's math mode for the precision.
void set_gemm_precision(cublasHandle_t handle, GemmPrecision precision);

// The column-major cublasSgemm call that computes a row-major C[m, n] = op(A) op(B).
// "first" is the operand passed first to cuBLAS (B), "second" the one passed
// second (A).
struct ColumnMajorGemm {
  cublasOperation_t first_op = CUBLAS_OP_N;   // op applied to B
  cublasOperation_t second_op = CUBLAS_OP_N;  // op applied to A
  int m = 0;                                  // cuBLAS m: columns of the row-major C
  int n = 0;                                  // cuBLAS n: rows of the row-major C
  int k = 0;                                  // the inner dimension
  int first_ld = 1;                           // B's row length
  int second_ld = 1;                          // A's row length
  int c_ld = 1;                               // C's row length
};

// Plans C = op(A) op(B) for row-major shapes. Throws std::invalid_argument when
// the shapes do not chain or a size exceeds cuBLAS's int range.
ColumnMajorGemm plan_row_major_gemm(int64_t a_rows, int64_t a_cols, bool transpose_a,
                                    int64_t b_rows, int64_t b_cols, bool transpose_b,
                                    int64_t c_rows, int64_t c_cols);

// C = alpha op(A) op(B) + beta C on the handle's stream (set it to the tensors').
void gemm(cublasHandle_t handle, const DeviceTensor& a, bool transpose_a, const DeviceTensor& b,
          bool transpose_b, DeviceTensor& c, float alpha, float beta);

// One matrix of each batch entry inside a larger buffer: [rows, cols] row-major
// with `ld` floats from one row to the next (>= cols: a strided view, such as
// one head's q inside the fused QKV rows) and `stride` floats from one entry's
// matrix to the next.
struct BatchedOperand {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t ld = 0;
  int64_t stride = 0;
};

// For each of `batch` entries, C = alpha op(A) op(B) + beta C, as one
// cublasSgemmStridedBatched call (row-major views swapped as above). Throws
// std::invalid_argument when the shapes do not chain or a row length exceeds
// its ld.
void strided_batched_gemm(cublasHandle_t handle, const float* a, const BatchedOperand& a_shape,
                          bool transpose_a, const float* b, const BatchedOperand& b_shape,
                          bool transpose_b, float* c, const BatchedOperand& c_shape, int64_t batch,
                          float alpha, float beta);

// C = alpha op(A) op(B) + beta C with A and B in bf16 (bf16_math.h's bits)
// and C in float32, accumulated in float32 (one cublasGemmEx call; the
// shapes' strides are unused). Throws as strided_batched_gemm.
void bf16_gemm(cublasHandle_t handle, const uint16_t* a, const BatchedOperand& a_shape,
               bool transpose_a, const uint16_t* b, const BatchedOperand& b_shape, bool transpose_b,
               float* c, const BatchedOperand& c_shape, float alpha, float beta);

// An input of a batched GEMM: its float32 values and, under mixed precision,
// the same values as bf16 in the same layout (`bf16`), which the GEMM then
// reads instead. at(offset) is the view starting `offset` values in, so a
// strided view (one head's q in the QKV rows) is the same in both.
// A value kept only in bf16 (KeptGemmInput) has no float32 values (null).
struct GemmInput {
  const float* values = nullptr;
  const uint16_t* bf16 = nullptr;  // null: the GEMM reads the float32 values
  GemmInput at(int64_t offset) const {
    return {values ? values + offset : nullptr, bf16 ? bf16 + offset : nullptr};
  }
};

// `count` float32 values as a GEMM input: when `round` (bf16-mixed) they are
// rounded to bf16 once, into a Workspace buffer on `allocator` (queued on its
// stream) that lives as long as this object, for every GEMM that reads them.
class RoundedGemmInput {
 public:
  RoundedGemmInput(const float* values, int64_t count, bool round, CachingAllocator* allocator);
  // `count` bf16 values that a kernel writes into rounded() (one that rounds
  // what it computes as it writes it, saving a pass over the float32 values).
  static RoundedGemmInput written_by_kernel(int64_t count, CachingAllocator* allocator);
  GemmInput at(int64_t offset = 0) const;
  uint16_t* rounded() { return rounded_.as<uint16_t>(); }

 private:
  RoundedGemmInput() = default;
  const float* values_ = nullptr;
  DeviceBuffer rounded_;  // empty unless rounded
};

// A weight as a GEMM input: with its bf16 copy (refreshed if its master
// changed) when it keeps one (DeviceTensor::keep_bf16_copy).
GemmInput weight_input(const DeviceTensor& weight);

// strided_batched_gemm on GemmInputs: when both have bf16 values, one
// cublasGemmStridedBatchedEx with CUDA_R_16BF inputs and float32 accumulation
// and output (C stays float32); when neither has, the float32 call. Throws
// std::invalid_argument when only one has, or as strided_batched_gemm.
void strided_batched_gemm(cublasHandle_t handle, GemmInput a, const BatchedOperand& a_shape,
                          bool transpose_a, GemmInput b, const BatchedOperand& b_shape,
                          bool transpose_b, float* c, const BatchedOperand& c_shape, int64_t batch,
                          float alpha, float beta);

// y [batch, out] = x [batch, in] W [in, out] (+ bias [1, out] unless bias is null
// or empty). y's storage may be uninitialised.
void linear_forward(cublasHandle_t handle, const DeviceTensor& x, const DeviceTensor& weight,
                    const DeviceTensor* bias, DeviceTensor& y);
// dx [batch, in] = dy [batch, out] W^T. dx's storage may be uninitialised.
void linear_backward_input(cublasHandle_t handle, const DeviceTensor& dy,
                           const DeviceTensor& weight, DeviceTensor& dx);
// weight_grad += x^T dy; bias_grad += column sums of dy (unless null or empty).
void linear_backward_weight(cublasHandle_t handle, const DeviceTensor& x, const DeviceTensor& dy,
                            DeviceTensor& weight_grad, DeviceTensor* bias_grad);

// The same three on raw row-major buffers of `rows` rows (the tensors' widths
// are the weight's): for layers that see one buffer under two shapes, such as
// a Transformer block's [batch, seq * dim] input read as [batch * seq, dim].
void linear_forward(cublasHandle_t handle, const float* x, int64_t rows, const DeviceTensor& weight,
                    const DeviceTensor* bias, float* y, cudaStream_t stream);
void linear_backward_input(cublasHandle_t handle, const float* dy, int64_t rows,
                           const DeviceTensor& weight, float* dx);
void linear_backward_weight(cublasHandle_t handle, const float* x, const float* dy, int64_t rows,
                            DeviceTensor& weight_grad, DeviceTensor* bias_grad);

// The forward and the weight gradient with x given as a GemmInput, for an x
// a layer keeps already rounded (kept_gemm_input.h): it is read as it is,
// with no rounding of its own. Its bf16 values must be there exactly when
// the weight keeps a bf16 copy (forward) or the gradient sums bf16 products
// (weight gradient); std::invalid_argument otherwise.
void linear_forward(cublasHandle_t handle, GemmInput x, int64_t rows, const DeviceTensor& weight,
                    const DeviceTensor* bias, float* y, cudaStream_t stream);
void linear_backward_weight(cublasHandle_t handle, GemmInput x, const float* dy, int64_t rows,
                            DeviceTensor& weight_grad, DeviceTensor* bias_grad);

}  // namespace pipelab::gpu
