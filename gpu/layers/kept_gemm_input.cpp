#include "gpu/layers/kept_gemm_input.h"

#include <cassert>

#include "gpu/kernels/bf16.h"

namespace pipelab::gpu {

KeptGemmInput::KeptGemmInput(DeviceTensor values, bool bf16) : bf16_(bf16), count_(values.size()) {
  if (!bf16 || count_ == 0) {  // (an empty input is never read: its GEMMs return at once)
    stored_ = std::move(values);
    return;
  }
  // Two bf16 values per float of storage, rounded up for an odd count.
  stored_ = DeviceTensor::uninitialized(1, (count_ + 1) / 2, values.allocator(), values.category());
  kernels::to_bf16(values.data(), reinterpret_cast<uint16_t*>(stored_.data()), count_,
                   stored_.stream());
  // `values` dies here; the allocator reuses its block only after the queued
  // rounding, which runs on the same stream.
}

GemmInput KeptGemmInput::gemm_input() const {
  if (!bf16_) return {stored_.data(), nullptr};
  return {nullptr, reinterpret_cast<const uint16_t*>(stored_.data())};
}

const DeviceTensor& KeptGemmInput::values() const {
  assert(!bf16_);
  return stored_;
}

void linear_forward(cublasHandle_t handle, const KeptGemmInput& x, int64_t first_row, int64_t rows,
                    const DeviceTensor& weight, const DeviceTensor* bias, float* y,
                    cudaStream_t stream) {
  const int64_t offset = first_row * weight.rows();
  if (x.bf16())
    linear_forward(handle, x.gemm_input().at(offset), rows, weight, bias, y, stream);
  else
    linear_forward(handle, x.values().data() + offset, rows, weight, bias, y, stream);
}

void linear_backward_weight(cublasHandle_t handle, const KeptGemmInput& x, int64_t first_row,
                            const float* dy, int64_t rows, DeviceTensor& weight_grad,
                            DeviceTensor* bias_grad) {
  const int64_t offset = first_row * weight_grad.rows();
  if (x.bf16())
    linear_backward_weight(handle, x.gemm_input().at(offset), dy, rows, weight_grad, bias_grad);
  else
    linear_backward_weight(handle, x.values().data() + offset, dy, rows, weight_grad, bias_grad);
}

}  // namespace pipelab::gpu
