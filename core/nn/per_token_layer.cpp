#include "core/nn/per_token_layer.h"

#include <cassert>
#include <utility>

namespace pipelab {

PerTokenLayer::PerTokenLayer(std::unique_ptr<Layer> inner, int64_t tokens)
    : Layer(inner->type(), inner->index(), inner->in_features() * tokens,
            inner->out_features() * tokens, inner->allocator()),
      inner_(std::move(inner)),
      tokens_(tokens) {
  assert(tokens_ >= 1);
}

Tensor PerTokenLayer::per_token(const Tensor& x, int64_t width) const {
  assert(x.cols() == tokens_ * width);
  return Tensor::view(x, x.rows() * tokens_, width);
}

Tensor PerTokenLayer::per_sample(Tensor y) const {
  y.reshape(y.rows() / tokens_, y.cols() * tokens_);
  return y;
}

Tensor PerTokenLayer::forward(const Tensor& x, const ForwardInfo& info) {
  return per_sample(inner_->forward(per_token(x, inner_->in_features()), info));
}

Tensor PerTokenLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) {
  return per_sample(inner_->backward_input(per_token(x, inner_->in_features()),
                                           per_token(dy, inner_->out_features()), info));
}

void PerTokenLayer::backward_weight(const Tensor& x, const Tensor& dy) {
  inner_->backward_weight(per_token(x, inner_->in_features()),
                          per_token(dy, inner_->out_features()));
}

}  // namespace pipelab
