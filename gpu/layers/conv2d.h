// GpuConv2d: a 2-D convolution as core/nn/conv2d.h (weight [out_channels,
// taps], bias [1, out_channels], the same im2col layout), on the GPU by
// im2col kernels and cuBLAS GEMMs over the whole micro-batch:
//   forward  cols = im2col(x); y_n = W cols_n (+ b), one strided-batched GEMM
//   BI       dcols_n = W^T dy_n, one strided-batched GEMM; dx = col2im(dcols)
//   BW       dW += dy_n cols_n^T, one GEMM per sample adding into dW (the
//            samples' products sum into one matrix); db += channel sums of dy
// im2col + cuBLAS rather than cuDNN: cuBLAS is already the backend's GEMM, so
// no new library has to be found, shipped and versioned on every GPU machine,
// and the math is the CPU's, which the per-op check compares it with. cols
// (taps x positions per sample, the micro-batch's) is Workspace while a call
// runs; the backward rebuilds it from x instead of keeping it.
// Under bf16-mixed the weight keeps a bf16 copy (gemm_weights) and the three
// products read it and cols or dy rounded to bf16, accumulating in float32,
// as a linear layer's (cublas_gemm.h).
#pragma once

#include <cstdint>

#include "core/nn/conv2d.h"
#include "gpu/layers/layer.h"

namespace pipelab::gpu {

// The bytes of the im2col matrix a convolution over `batch` samples holds
// while it runs (as Workspace).
inline int64_t im2col_bytes(const ConvGeometry& geometry, int64_t batch) {
  return batch * geometry.taps() * geometry.out.pixels() * static_cast<int64_t>(sizeof(float));
}

class GpuConv2d : public GpuLayer {
 public:
  // Weights start at zero: init() sets the CPU layer's initial values.
  GpuConv2d(int index, const ConvGeometry& geometry, bool bias, DeviceContext& context);

  // The CPU layer's initial weights (core/nn/conv2d.h's init with the same
  // seed and part), generated on the host and copied here.
  void init(uint64_t seed, int part = 0);

  DeviceTensor forward(const DeviceTensor& x, const ForwardInfo& info) override;
  DeviceTensor backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                              const ForwardInfo& info) override;
  void backward_weight(const DeviceTensor& x, const DeviceTensor& dy) override;
  std::vector<DeviceTensor*> params() override;
  std::vector<DeviceTensor*> grads() override;
  std::vector<DeviceTensor*> gemm_weights() override { return {&weight_}; }

  const ConvGeometry& geometry() const { return geometry_; }
  bool has_bias() const { return !bias_.empty(); }

 private:
  // im2col of x's samples, [batch * taps, positions], Workspace.
  DeviceTensor columns(const DeviceTensor& x) const;

  ConvGeometry geometry_;
  DeviceTensor weight_;       // [out.channels, taps()], Weights
  DeviceTensor bias_;         // [1, out.channels] or empty, Weights
  DeviceTensor weight_grad_;  // Gradients
  DeviceTensor bias_grad_;
};

}  // namespace pipelab::gpu
