#include "gpu/layers/cublas_gemm.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <stdexcept>

#include "gpu/device/cuda_check.h"
#include "gpu/kernels/bf16.h"
#include "gpu/kernels/bias.h"
#include "gpu/kernels/column_reduce.h"

namespace pipelab::gpu {
namespace {

int blas_int(int64_t value, const char* what) {
  if (value < 0 || value > INT_MAX)
    throw std::invalid_argument(std::string("GEMM ") + what + " " + std::to_string(value) +
                                " is outside cuBLAS's int range");
  return static_cast<int>(value);
}

std::string shape(int64_t rows, int64_t cols, bool transposed) {
  return std::to_string(rows) + " x " + std::to_string(cols) + (transposed ? " (transposed)" : "");
}

}  // namespace

const char* gemm_precision_name(GemmPrecision precision) {
  return precision == GemmPrecision::Tf32 ? "tf32" : "fp32";
}

std::optional<GemmPrecision> parse_gemm_precision(const std::string& name) {
  if (name == "fp32") return GemmPrecision::Fp32;
  if (name == "tf32") return GemmPrecision::Tf32;
  return std::nullopt;
}

void set_gemm_precision(cublasHandle_t handle, GemmPrecision precision) {
  PIPELAB_CUBLAS_CHECK(cublasSetMathMode(
      handle, precision == GemmPrecision::Tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
}

ColumnMajorGemm plan_row_major_gemm(int64_t a_rows, int64_t a_cols, bool transpose_a,
                                    int64_t b_rows, int64_t b_cols, bool transpose_b,
                                    int64_t c_rows, int64_t c_cols) {
  // op(A) is [M, K], op(B) is [K, N], C is [M, N].
  const int64_t op_a_rows = transpose_a ? a_cols : a_rows;
  const int64_t inner = transpose_a ? a_rows : a_cols;
  const int64_t op_b_rows = transpose_b ? b_cols : b_rows;
  const int64_t op_b_cols = transpose_b ? b_rows : b_cols;
  if (op_a_rows != c_rows || op_b_rows != inner || op_b_cols != c_cols)
    throw std::invalid_argument(
        "GEMM shapes do not chain: A " + shape(a_rows, a_cols, transpose_a) + ", B " +
        shape(b_rows, b_cols, transpose_b) + ", C " + shape(c_rows, c_cols, false));
  ColumnMajorGemm plan;
  plan.first_op = transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  plan.second_op = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  plan.m = blas_int(c_cols, "width");
  plan.n = blas_int(c_rows, "height");
  plan.k = blas_int(inner, "inner size");
  // Leading dimensions must be >= 1 even for empty matrices.
  plan.first_ld = std::max(1, blas_int(b_cols, "row length"));
  plan.second_ld = std::max(1, blas_int(a_cols, "row length"));
  plan.c_ld = std::max(1, blas_int(c_cols, "row length"));
  return plan;
}

void gemm(cublasHandle_t handle, const DeviceTensor& a, bool transpose_a, const DeviceTensor& b,
          bool transpose_b, DeviceTensor& c, float alpha, float beta) {
  const ColumnMajorGemm plan = plan_row_major_gemm(a.rows(), a.cols(), transpose_a, b.rows(),
                                                   b.cols(), transpose_b, c.rows(), c.cols());
  if (plan.m == 0 || plan.n == 0) return;
  PIPELAB_CUBLAS_CHECK(cublasSgemm(handle, plan.first_op, plan.second_op, plan.m, plan.n, plan.k,
                                   &alpha, b.data(), plan.first_ld, a.data(), plan.second_ld, &beta,
                                   c.data(), plan.c_ld));
}

namespace {

// plan_row_major_gemm for strided views: the row lengths are the views' ld.
ColumnMajorGemm plan_strided_gemm(const BatchedOperand& a_shape, bool transpose_a,
                                  const BatchedOperand& b_shape, bool transpose_b,
                                  const BatchedOperand& c_shape) {
  ColumnMajorGemm plan =
      plan_row_major_gemm(a_shape.rows, a_shape.cols, transpose_a, b_shape.rows, b_shape.cols,
                          transpose_b, c_shape.rows, c_shape.cols);
  for (const BatchedOperand* operand : {&a_shape, &b_shape, &c_shape})
    if (operand->ld < operand->cols)
      throw std::invalid_argument("batched GEMM row length " + std::to_string(operand->ld) +
                                  " is shorter than the matrix's " + std::to_string(operand->cols) +
                                  " columns");
  plan.first_ld = std::max(1, blas_int(b_shape.ld, "row length"));
  plan.second_ld = std::max(1, blas_int(a_shape.ld, "row length"));
  plan.c_ld = std::max(1, blas_int(c_shape.ld, "row length"));
  return plan;
}

}  // namespace

void strided_batched_gemm(cublasHandle_t handle, const float* a, const BatchedOperand& a_shape,
                          bool transpose_a, const float* b, const BatchedOperand& b_shape,
                          bool transpose_b, float* c, const BatchedOperand& c_shape, int64_t batch,
                          float alpha, float beta) {
  const ColumnMajorGemm plan =
      plan_strided_gemm(a_shape, transpose_a, b_shape, transpose_b, c_shape);
  if (plan.m == 0 || plan.n == 0 || batch == 0) return;
  PIPELAB_CUBLAS_CHECK(cublasSgemmStridedBatched(
      handle, plan.first_op, plan.second_op, plan.m, plan.n, plan.k, &alpha, b, plan.first_ld,
      static_cast<long long>(b_shape.stride), a, plan.second_ld,
      static_cast<long long>(a_shape.stride), &beta, c, plan.c_ld,
      static_cast<long long>(c_shape.stride), blas_int(batch, "batch count")));
}

void bf16_gemm(cublasHandle_t handle, const uint16_t* a, const BatchedOperand& a_shape,
               bool transpose_a, const uint16_t* b, const BatchedOperand& b_shape, bool transpose_b,
               float* c, const BatchedOperand& c_shape, float alpha, float beta) {
  const ColumnMajorGemm plan =
      plan_strided_gemm(a_shape, transpose_a, b_shape, transpose_b, c_shape);
  if (plan.m == 0 || plan.n == 0) return;
  PIPELAB_CUBLAS_CHECK(cublasGemmEx(handle, plan.first_op, plan.second_op, plan.m, plan.n, plan.k,
                                    &alpha, b, CUDA_R_16BF, plan.first_ld, a, CUDA_R_16BF,
                                    plan.second_ld, &beta, c, CUDA_R_32F, plan.c_ld,
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

RoundedGemmInput::RoundedGemmInput(const float* values, int64_t count, bool round,
                                   CachingAllocator* allocator)
    : values_(values) {
  if (!round || count == 0) return;
  rounded_ = DeviceBuffer(count * static_cast<int64_t>(sizeof(uint16_t)), allocator,
                          MemoryCategory::Workspace);
  kernels::to_bf16(values, rounded_.as<uint16_t>(), count, allocator->stream());
}

RoundedGemmInput RoundedGemmInput::written_by_kernel(int64_t count, CachingAllocator* allocator) {
  RoundedGemmInput input;
  if (count > 0)
    input.rounded_ = DeviceBuffer(count * static_cast<int64_t>(sizeof(uint16_t)), allocator,
                                  MemoryCategory::Workspace);
  return input;
}

GemmInput RoundedGemmInput::at(int64_t offset) const {
  return GemmInput{values_, rounded_.empty() ? nullptr : rounded_.as<uint16_t>()}.at(offset);
}

GemmInput weight_input(const DeviceTensor& weight) {
  return {weight.data(), weight.has_bf16_copy() ? weight.refresh_bf16_copy() : nullptr};
}

void strided_batched_gemm(cublasHandle_t handle, GemmInput a, const BatchedOperand& a_shape,
                          bool transpose_a, GemmInput b, const BatchedOperand& b_shape,
                          bool transpose_b, float* c, const BatchedOperand& c_shape, int64_t batch,
                          float alpha, float beta) {
  const ColumnMajorGemm plan =
      plan_strided_gemm(a_shape, transpose_a, b_shape, transpose_b, c_shape);
  if (plan.m == 0 || plan.n == 0 || batch == 0) return;  // (an empty input is never rounded)
  if ((a.bf16 == nullptr) != (b.bf16 == nullptr))
    throw std::invalid_argument("batched GEMM: one input is bf16 and the other float32");
  if (!a.bf16) {
    strided_batched_gemm(handle, a.values, a_shape, transpose_a, b.values, b_shape, transpose_b, c,
                         c_shape, batch, alpha, beta);
    return;
  }
  PIPELAB_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      handle, plan.first_op, plan.second_op, plan.m, plan.n, plan.k, &alpha, b.bf16, CUDA_R_16BF,
      plan.first_ld, static_cast<long long>(b_shape.stride), a.bf16, CUDA_R_16BF, plan.second_ld,
      static_cast<long long>(a_shape.stride), &beta, c, CUDA_R_32F, plan.c_ld,
      static_cast<long long>(c_shape.stride), blas_int(batch, "batch count"), CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT));
}

namespace {

// A plain [rows, cols] buffer as a batch of one.
BatchedOperand whole(int64_t rows, int64_t cols) { return {rows, cols, cols, 0}; }

// out = op(values) op(weight) + beta out, the product of a linear layer that
// reads its weight. In float32; or, when the weight keeps a bf16 copy (mixed
// precision), in bf16 with float32 accumulation and output: the weight's copy
// and the values' bf16 ones.
void weight_product(cublasHandle_t handle, GemmInput values, const BatchedOperand& values_shape,
                    const DeviceTensor& weight, bool transpose_weight, float* out,
                    const BatchedOperand& out_shape, float beta) {
  strided_batched_gemm(handle, values, values_shape, false, weight_input(weight),
                       whole(weight.rows(), weight.cols()), transpose_weight, out, out_shape, 1,
                       1.0f, beta);
}

// float32 values as a weight product's input: rounded to bf16 (for the call)
// when the weight keeps a bf16 copy.
RoundedGemmInput weight_product_input(const float* values, int64_t count,
                                      const DeviceTensor& weight) {
  return RoundedGemmInput(values, count, weight.has_bf16_copy(), weight.allocator());
}

}  // namespace

void linear_forward(cublasHandle_t handle, GemmInput x, int64_t rows, const DeviceTensor& weight,
                    const DeviceTensor* bias, float* y, cudaStream_t stream) {
  const int64_t in = weight.rows();
  const int64_t out = weight.cols();
  if (rows == 0 || out == 0) return;
  const bool with_bias = bias && !bias->empty();
  // Seeding Y with the bias and using beta = 1 adds it inside the GEMM's pass.
  if (with_bias) kernels::broadcast_rows(y, bias->data(), rows, out, stream);
  weight_product(handle, x, whole(rows, in), weight, false, y, whole(rows, out),
                 with_bias ? 1.0f : 0.0f);
}

void linear_forward(cublasHandle_t handle, const float* x, int64_t rows, const DeviceTensor& weight,
                    const DeviceTensor* bias, float* y, cudaStream_t stream) {
  const RoundedGemmInput input = weight_product_input(x, rows * weight.rows(), weight);
  linear_forward(handle, input.at(), rows, weight, bias, y, stream);
}

void linear_backward_input(cublasHandle_t handle, const float* dy, int64_t rows,
                           const DeviceTensor& weight, float* dx) {
  const int64_t in = weight.rows();
  const int64_t out = weight.cols();
  const RoundedGemmInput input = weight_product_input(dy, rows * out, weight);
  weight_product(handle, input.at(), whole(rows, out), weight, true, dx, whole(rows, in), 0.0f);
}

void linear_backward_weight(cublasHandle_t handle, GemmInput x, const float* dy, int64_t rows,
                            DeviceTensor& weight_grad, DeviceTensor* bias_grad) {
  const int64_t in = weight_grad.rows();
  const int64_t out = weight_grad.cols();
  if (rows == 0) return;
  const RoundedGemmInput dy_input(dy, rows * out, weight_grad.accumulates_bf16_products(),
                                  weight_grad.allocator());
  strided_batched_gemm(handle, x, whole(rows, in), true, dy_input.at(), whole(rows, out), false,
                       weight_grad.data(), whole(in, out), 1, 1.0f, 1.0f);
  if (bias_grad && !bias_grad->empty()) {
    DeviceTensor scratch =
        DeviceTensor::uninitialized(1, kernels::column_partial_floats(rows, out),
                                    bias_grad->allocator(), MemoryCategory::Workspace);
    kernels::add_column_sums(bias_grad->data(), dy, rows, out, scratch.data(), bias_grad->stream());
  }
}

void linear_backward_weight(cublasHandle_t handle, const float* x, const float* dy, int64_t rows,
                            DeviceTensor& weight_grad, DeviceTensor* bias_grad) {
  const RoundedGemmInput x_input(x, rows * weight_grad.rows(),
                                 weight_grad.accumulates_bf16_products(), weight_grad.allocator());
  linear_backward_weight(handle, x_input.at(), dy, rows, weight_grad, bias_grad);
}

void linear_forward(cublasHandle_t handle, const DeviceTensor& x, const DeviceTensor& weight,
                    const DeviceTensor* bias, DeviceTensor& y) {
  assert(x.cols() == weight.rows() && y.rows() == x.rows() && y.cols() == weight.cols());
  if (y.empty()) return;
  linear_forward(handle, x.data(), x.rows(), weight, bias, y.data(), y.stream());
}

void linear_backward_input(cublasHandle_t handle, const DeviceTensor& dy,
                           const DeviceTensor& weight, DeviceTensor& dx) {
  assert(dy.cols() == weight.cols() && dx.rows() == dy.rows() && dx.cols() == weight.rows());
  linear_backward_input(handle, dy.data(), dy.rows(), weight, dx.data());
}

void linear_backward_weight(cublasHandle_t handle, const DeviceTensor& x, const DeviceTensor& dy,
                            DeviceTensor& weight_grad, DeviceTensor* bias_grad) {
  assert(x.rows() == dy.rows() && weight_grad.rows() == x.cols() &&
         weight_grad.cols() == dy.cols());
  linear_backward_weight(handle, x.data(), dy.data(), x.rows(), weight_grad, bias_grad);
}

}  // namespace pipelab::gpu
