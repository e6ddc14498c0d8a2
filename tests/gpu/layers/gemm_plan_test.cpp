// Host-only check of the row-major -> column-major GEMM mapping: running the
// planned call through a reference column-major SGEMM (BLAS semantics, as
// cuBLAS implements them) must give the row-major product.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gpu/layers/cublas_gemm.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

// C = op(A) op(B) (alpha 1, beta 0), column-major with leading dimensions.
void reference_column_major_sgemm(cublasOperation_t op_a, cublasOperation_t op_b, int m, int n,
                                  int k, const float* a, int lda, const float* b, int ldb, float* c,
                                  int ldc) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int l = 0; l < k; ++l) {
        const float a_il = op_a == CUBLAS_OP_N ? a[i + l * lda] : a[l + i * lda];
        const float b_lj = op_b == CUBLAS_OP_N ? b[l + j * ldb] : b[j + l * ldb];
        sum += static_cast<double>(a_il) * b_lj;
      }
      c[i + j * ldc] = static_cast<float>(sum);
    }
}

// Row-major element (r, c) of op(X) for X [rows, cols].
float op_at(const std::vector<float>& x, int64_t cols, bool transposed, int64_t r, int64_t c) {
  return transposed ? x[c * cols + r] : x[r * cols + c];
}

TEST(GemmPlanTest, ColumnMajorCallComputesTheRowMajorProduct) {
  const int64_t m = 5, n = 7, k = 3;
  for (bool transpose_a : {false, true})
    for (bool transpose_b : {false, true}) {
      const int64_t a_rows = transpose_a ? k : m, a_cols = transpose_a ? m : k;
      const int64_t b_rows = transpose_b ? n : k, b_cols = transpose_b ? k : n;
      const std::vector<float> a = testing::random_values(a_rows * a_cols, 1);
      const std::vector<float> b = testing::random_values(b_rows * b_cols, 2);

      std::vector<float> expected(m * n);
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < n; ++c) {
          double sum = 0;
          for (int64_t l = 0; l < k; ++l)
            sum += static_cast<double>(op_at(a, a_cols, transpose_a, r, l)) *
                   op_at(b, b_cols, transpose_b, l, c);
          expected[r * n + c] = static_cast<float>(sum);
        }

      const ColumnMajorGemm plan =
          plan_row_major_gemm(a_rows, a_cols, transpose_a, b_rows, b_cols, transpose_b, m, n);
      EXPECT_EQ(plan.m, n);
      EXPECT_EQ(plan.n, m);
      EXPECT_EQ(plan.k, k);
      std::vector<float> c(m * n, -1.0f);
      // As gemm() calls cuBLAS: B first, then A.
      reference_column_major_sgemm(plan.first_op, plan.second_op, plan.m, plan.n, plan.k, b.data(),
                                   plan.first_ld, a.data(), plan.second_ld, c.data(), plan.c_ld);
      testing::expect_close(c, expected, 1e-6, 1e-7,
                            std::string("transpose_a ") + (transpose_a ? "1" : "0") +
                                " transpose_b " + (transpose_b ? "1" : "0"));
    }
}

TEST(GemmPlanTest, LinearLayerShapes) {
  // Forward Y[b, out] = X[b, in] W[in, out]; BI dX[b, in] = dY W^T; BW dW[in, out] = X^T dY.
  const int64_t batch = 4, in = 6, out = 3;
  EXPECT_NO_THROW(plan_row_major_gemm(batch, in, false, in, out, false, batch, out));
  EXPECT_NO_THROW(plan_row_major_gemm(batch, out, false, in, out, true, batch, in));
  const ColumnMajorGemm weight_grad =
      plan_row_major_gemm(batch, in, true, batch, out, false, in, out);
  EXPECT_EQ(weight_grad.first_op, CUBLAS_OP_N);   // dY as stored
  EXPECT_EQ(weight_grad.second_op, CUBLAS_OP_T);  // X transposed
  EXPECT_EQ(weight_grad.k, batch);
  EXPECT_EQ(weight_grad.c_ld, out);
}

TEST(GemmPlanTest, MismatchedShapesThrow) {
  EXPECT_THROW(plan_row_major_gemm(4, 6, false, 5, 3, false, 4, 3), std::invalid_argument);
  EXPECT_THROW(plan_row_major_gemm(4, 6, false, 6, 3, false, 4, 2), std::invalid_argument);
  EXPECT_THROW(plan_row_major_gemm(4, 6, true, 6, 3, false, 4, 3), std::invalid_argument);
}

// A batched GEMM reads both inputs in bf16 or both in float32; a mix is refused
// before cuBLAS is called (so no handle is needed), and a view keeps the two
// layouts together.
TEST(GemmPlanTest, BatchedGemmInputsAgreeOnPrecision) {
  const float values[6] = {};
  const uint16_t bits[6] = {};
  const BatchedOperand shape{2, 3, 3, 6};
  const BatchedOperand product{2, 2, 2, 4};
  float c[4] = {};
  EXPECT_THROW(strided_batched_gemm(nullptr, GemmInput{values, bits}, shape, false,
                                    GemmInput{values, nullptr}, shape, true, c, product, 1, 1.0f,
                                    0.0f),
               std::invalid_argument);
  const GemmInput view = GemmInput{values, bits}.at(4);
  EXPECT_EQ(view.values, values + 4);
  EXPECT_EQ(view.bf16, bits + 4);
  EXPECT_EQ((GemmInput{values, nullptr}.at(4).bf16), nullptr);
}

TEST(GemmPlanTest, EmptyMatricesKeepLeadingDimensionsPositive) {
  const ColumnMajorGemm plan = plan_row_major_gemm(0, 0, false, 0, 5, false, 0, 5);
  EXPECT_EQ(plan.n, 0);
  EXPECT_GE(plan.second_ld, 1);
  EXPECT_GE(plan.first_ld, 1);
}

TEST(GemmPrecisionTest, NamesRoundTrip) {
  for (GemmPrecision precision : {GemmPrecision::Fp32, GemmPrecision::Tf32})
    EXPECT_EQ(parse_gemm_precision(gemm_precision_name(precision)), precision);
  EXPECT_FALSE(parse_gemm_precision("bf16").has_value());
}

}  // namespace
}  // namespace pipelab::gpu
