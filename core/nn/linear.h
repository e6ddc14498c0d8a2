// LinearLayer: y = x W + b, with W stored [in_features, out_features] row-major
// and b [1, out_features]. (PyTorch stores W transposed, [out, in], and computes
// x W^T; the math is the same.) With W as [in, out], a Megatron column-parallel
// shard holds a block of W's columns and a row-parallel shard a block of its
// rows (tensor_parallel.h).
//
// All three products are one cblas_sgemm each, with the transposes folded into
// the call (no transposed copies):
//   forward          Y  = X W          (+ b, seeded into Y before the GEMM)
//   backward_input   dX = dY W^T
//   backward_weight  dW += X^T dY,  db += column sums of dY
#pragma once

#include "core/nn/layer.h"

namespace pipelab {

// The three products as kernels over caller-allocated tensors, shared by the
// layer and the Transformer block (gpt_block.h). W is [in, out].
// y [batch, out] = x W, plus bias [1, out] on every row when bias is not null.
void linear_forward(const Tensor& x, const Tensor& weight, const Tensor* bias, Tensor& y);
// dx [batch, in] = dy W^T (overwritten).
void linear_backward_input(const Tensor& dy, const Tensor& weight, Tensor& dx);
// weight_grad += x^T dy; bias_grad (when not null) += column sums of dy.
void linear_backward_weight(const Tensor& x, const Tensor& dy, Tensor& weight_grad,
                            Tensor* bias_grad);
// y += bias on every row.
void add_row_vector(const Tensor& bias, Tensor& y);

class LinearLayer : public Layer {
 public:
  // Weights and bias start at zero: fill them with init_linear (init.h) or by hand.
  // add_bias_in_forward = false leaves the bias out of forward, for a
  // row-parallel shard that adds it once after the all-reduce (add_bias).
  LinearLayer(int index, int64_t in_features, int64_t out_features, bool bias,
              DeviceAllocator* allocator, bool add_bias_in_forward = true);

  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
  void backward_weight(const Tensor& x, const Tensor& dy) override;
  std::vector<Tensor*> params() override;
  std::vector<Tensor*> grads() override;

  // y += b on every row (no-op without a bias).
  void add_bias(Tensor& y) const;

  bool has_bias() const { return !bias_.empty(); }
  Tensor& weight() { return weight_; }
  Tensor& bias() { return bias_; }
  Tensor& weight_grad() { return weight_grad_; }
  Tensor& bias_grad() { return bias_grad_; }

 private:
  const bool add_bias_in_forward_;
  Tensor weight_;       // [in, out], Weights
  Tensor bias_;         // [1, out] or empty, Weights
  Tensor weight_grad_;  // [in, out], Gradients
  Tensor bias_grad_;    // [1, out] or empty, Gradients
};

}  // namespace pipelab
