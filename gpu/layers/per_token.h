// GpuPerTokenLayer: core/nn/per_token_layer.h on the CUDA backend: a linear
// or a layer norm of a sequence model, applied to each position alone. The
// stage passes [batch, seq * width]; the wrapped layer works on the same
// floats as [batch * seq, width]. A DeviceTensor owns its storage and has no
// views, so the (const) inputs are copied into per-token shaped tensors for
// the call (one activation-sized copy, freed when the call returns); results
// are reshaped in place.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/layers/layer.h"

namespace pipelab::gpu {

class GpuPerTokenLayer : public GpuLayer {
 public:
  GpuPerTokenLayer(std::unique_ptr<GpuLayer> inner, int64_t tokens);

  DeviceTensor forward(const DeviceTensor& x, const ForwardInfo& info) override;
  DeviceTensor backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                              const ForwardInfo& info) override;
  void backward_weight(const DeviceTensor& x, const DeviceTensor& dy) override;
  std::vector<DeviceTensor*> params() override { return inner_->params(); }
  std::vector<DeviceTensor*> grads() override { return inner_->grads(); }
  std::vector<DeviceTensor*> gemm_weights() override { return inner_->gemm_weights(); }

  GpuLayer& inner() { return *inner_; }
  // y [batch, tokens * width] seen per token while `apply` runs on it.
  template <typename Apply>
  void per_token_in_place(DeviceTensor& y, Apply apply) {
    const int64_t rows = y.rows();
    y.reshape(rows * tokens_, y.cols() / tokens_);
    apply(y);
    y.reshape(rows, y.cols() * tokens_);
  }

 private:
  DeviceTensor per_token(const DeviceTensor& x) const;  // a [batch * tokens, width] copy
  DeviceTensor per_sample(DeviceTensor y) const;        // reshaped back, in place

  std::unique_ptr<GpuLayer> inner_;
  const int64_t tokens_;
};

}  // namespace pipelab::gpu
