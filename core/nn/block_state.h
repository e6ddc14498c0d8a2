// The state plumbing that the CPU and the CUDA Transformer block share.
//
// BasicBlockTensors<TensorT>: a block's twelve weight (or gradient) tensors,
// empty where the config has none. BasicBlockState<TensorT, CacheT>: what one
// micro-batch's forward keeps for its backward, the backend's cache plus the
// MoE MLP's state; the stage counts its bytes and offloading moves its
// tensors. Each backend keeps its own cache (the GPU's holds bf16 copies of
// some values, kept_gemm_input.h) and says which tensors it has through a
// static CacheT::all_tensors(cache).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/nn/basic_layer.h"

namespace pipelab {

template <typename TensorT>
struct BasicBlockTensors {
  TensorT norm1_gain, norm1_bias;  // [1, dim]
  TensorT qkv_weight, qkv_bias;    // [dim, qkv_width / tp], [1, qkv_width / tp]
  TensorT proj_weight, proj_bias;  // [dim / tp, dim], [1, dim]
  TensorT norm2_gain, norm2_bias;  // [1, dim]
  TensorT ffn1_weight, ffn1_bias;  // [dim, ffn1_width / tp], [1, ffn1_width / tp]
  TensorT ffn2_weight, ffn2_bias;  // [f / tp, dim], [1, dim]

  // Every member, in the order above: the same index names the same tensor
  // in both backends (uploading a host block to the device pairs them).
  static constexpr std::array<TensorT BasicBlockTensors::*, 12> kMembers = {
      &BasicBlockTensors::norm1_gain,  &BasicBlockTensors::norm1_bias,
      &BasicBlockTensors::qkv_weight,  &BasicBlockTensors::qkv_bias,
      &BasicBlockTensors::proj_weight, &BasicBlockTensors::proj_bias,
      &BasicBlockTensors::norm2_gain,  &BasicBlockTensors::norm2_bias,
      &BasicBlockTensors::ffn1_weight, &BasicBlockTensors::ffn1_bias,
      &BasicBlockTensors::ffn2_weight, &BasicBlockTensors::ffn2_bias};

  // The non-empty tensors, in the order above.
  std::vector<TensorT*> list() { return list_like(*this); }
  // The tensors where `shape` has non-empty ones: the gradients of the
  // weights, even while ZeRO 2 has released them (device_worker.h).
  std::vector<TensorT*> list_like(const BasicBlockTensors& shape) {
    std::vector<TensorT*> all;
    for (TensorT BasicBlockTensors::*member : kMembers)
      if (!(shape.*member).empty()) all.push_back(&(this->*member));
    return all;
  }
};

template <typename TensorT, typename CacheT>
class BasicBlockState : public MovableLayerState<TensorT> {
 public:
  CacheT cache;
  std::unique_ptr<LayerState> experts;  // the MoE MLP's (its mix's state), with experts only

  int64_t bytes() const override {
    int64_t total = experts ? experts->bytes() : 0;
    for (const TensorT* t : CacheT::all_tensors(cache)) total += t->bytes();
    return total;
  }

  std::vector<TensorT*> tensors() override {
    const auto all = CacheT::all_tensors(cache);
    std::vector<TensorT*> list(all.begin(), all.end());
    if (!experts) return list;
    const std::vector<TensorT*> more = static_cast<MovableLayerState<TensorT>&>(*experts).tensors();
    list.insert(list.end(), more.begin(), more.end());
    return list;
  }

  // After backward_input: frees what backward_weight does not read (the
  // experts added their weight gradients already), before a zero-bubble
  // schedule's wait for BW. Under sequence parallelism BW reads the norms'
  // gathered copies, not the norm outputs.
  void drop_unread_by_backward_weight(bool sequence_parallel) {
    experts.reset();
    cache.qkv.reset();
    cache.probabilities.reset();
    cache.lse.reset();
    if (sequence_parallel) {
      cache.norm1_out.reset();
      cache.norm2_out.reset();
    }
    cache.ffn1_out.reset();
    cache.d_activation_out.reset();
    cache.d_attention_out.reset();
  }
};

}  // namespace pipelab
