#include "gpu/layers/per_token.h"

#include <cassert>
#include <utility>

namespace pipelab::gpu {

GpuPerTokenLayer::GpuPerTokenLayer(std::unique_ptr<GpuLayer> inner, int64_t tokens)
    : GpuLayer(inner->type(), inner->index(), inner->in_features() * tokens,
               inner->out_features() * tokens, inner->context()),
      inner_(std::move(inner)),
      tokens_(tokens) {
  assert(tokens_ >= 1);
}

DeviceTensor GpuPerTokenLayer::per_token(const DeviceTensor& x) const {
  assert(x.cols() % tokens_ == 0);
  DeviceTensor rows = x.clone(MemoryCategory::Workspace);
  rows.reshape(x.rows() * tokens_, x.cols() / tokens_);
  return rows;
}

DeviceTensor GpuPerTokenLayer::per_sample(DeviceTensor y) const {
  y.reshape(y.rows() / tokens_, y.cols() * tokens_);
  return y;
}

DeviceTensor GpuPerTokenLayer::forward(const DeviceTensor& x, const ForwardInfo& info) {
  return per_sample(inner_->forward(per_token(x), info));
}

DeviceTensor GpuPerTokenLayer::backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                              const ForwardInfo& info) {
  return per_sample(inner_->backward_input(per_token(x), per_token(dy), info));
}

void GpuPerTokenLayer::backward_weight(const DeviceTensor& x, const DeviceTensor& dy) {
  inner_->backward_weight(per_token(x), per_token(dy));
}

}  // namespace pipelab::gpu
