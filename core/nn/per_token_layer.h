// PerTokenLayer: a layer of a sequence model that acts on each position alone
// (a linear or a layernorm after an embedding). The stage passes a sample as
// one row of seq x width values, [batch, seq * width]; row-major, that is the
// same floats as [batch * seq, width], one row per token, which is what the
// wrapped layer's math wants. So this runs the wrapped layer on a view of
// that shape (no copy) and reshapes its result back, and the per-token math
// stays in one place (linear.h, layer_norm.h). Elementwise layers need no
// wrapping: they do not care how values are grouped into rows.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/nn/layer.h"

namespace pipelab {

class PerTokenLayer : public Layer {
 public:
  // `inner` works on one position ([rows, in] -> [rows, out]); this layer on
  // `tokens` of them per sample.
  PerTokenLayer(std::unique_ptr<Layer> inner, int64_t tokens);

  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
  void backward_weight(const Tensor& x, const Tensor& dy) override;
  std::vector<Tensor*> params() override { return inner_->params(); }
  std::vector<Tensor*> grads() override { return inner_->grads(); }

  Layer& inner() { return *inner_; }
  int64_t tokens() const { return tokens_; }

 private:
  // x [batch, tokens * width] seen as [batch * tokens, width].
  Tensor per_token(const Tensor& x, int64_t width) const;
  // y [batch * tokens, width] back to [batch, tokens * width], in place.
  Tensor per_sample(Tensor y) const;

  std::unique_ptr<Layer> inner_;
  const int64_t tokens_;
};

}  // namespace pipelab
