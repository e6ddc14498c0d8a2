// KeptGemmInput: a value a layer keeps from its forward for its backward only
// to feed GEMMs (a linear's input, read again by its weight gradient
// dW = x^T dy; attention's q, k and v). Under training.precision = bf16-mixed
// those GEMMs read the value rounded to bf16 (cublas_gemm.h), so the layer
// keeps just that: rounded once, in the forward, 2 bytes a value. Otherwise
// it keeps the float32 values as they are.
//
// Losses cannot change by keeping bf16: the forward's GEMM and the backward's
// read the very bits that rounding the float32 values in each GEMM gave
// before (the same kernel, bf16_math.h's round to nearest, ties to even,
// applied to the same values), so every product is the same cuBLAS call on
// the same inputs.
//
// The bf16 bits are stored in a DeviceTensor of floats, two per float
// ([1, ceil(count / 2)]), so that whatever moves kept tensors (offloading to
// the host, a LayerState's byte count, moves and resets) handles them as any
// other, at their real size. Which values of which layer are kept so:
// kept_bf16.h.
#pragma once

#include <cstdint>

#include "gpu/layers/cublas_gemm.h"
#include "gpu/memory/device_tensor.h"

namespace pipelab::gpu {

class KeptGemmInput {
 public:
  KeptGemmInput() = default;  // empty: nothing kept
  // Keeps `values`: as they are, or, when `bf16`, rounded to bf16 (queued on
  // their stream, counted under their category) and the float32 ones freed.
  KeptGemmInput(DeviceTensor values, bool bf16);

  // What a GEMM reads: the float32 values, or only the bf16 ones (no float32).
  GemmInput gemm_input() const;
  // The float32 values; only when not kept in bf16 (asserted).
  const DeviceTensor& values() const;

  bool bf16() const { return bf16_; }
  int64_t count() const { return count_; }  // values kept
  bool empty() const { return stored_.empty(); }
  int64_t bytes() const { return stored_.bytes(); }
  // The tensor holding whatever is kept, for code that moves kept tensors
  // (offloading): it may empty it and fill it again with the same bytes.
  DeviceTensor& stored() { return stored_; }
  const DeviceTensor& stored() const { return stored_; }
  void reset() { stored_.reset(); }

 private:
  DeviceTensor stored_;  // the float32 values, or the bf16 bits two per float
  bool bf16_ = false;
  int64_t count_ = 0;  // values kept
};

// cublas_gemm.h's linear forward and weight gradient on rows [first_row,
// first_row + rows) of a kept input x (rows of the weight's input width):
// its bf16 values read as kept, or its float32 values (rounded for the call
// under bf16-mixed, as before).
void linear_forward(cublasHandle_t handle, const KeptGemmInput& x, int64_t first_row, int64_t rows,
                    const DeviceTensor& weight, const DeviceTensor* bias, float* y,
                    cudaStream_t stream);
void linear_backward_weight(cublasHandle_t handle, const KeptGemmInput& x, int64_t first_row,
                            const float* dy, int64_t rows, DeviceTensor& weight_grad,
                            DeviceTensor* bias_grad);

}  // namespace pipelab::gpu
