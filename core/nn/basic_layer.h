// BasicLayer: the contract of one entry of a stage's layer stack, written once
// for every backend (core/nn's Layer over host Tensors, gpu/'s GpuLayer over
// DeviceTensors): forward, and a backward split into the input gradient (BI)
// and the weight gradient (BW) for zero-bubble schedules.
//
// Most layers keep no per-micro-batch state: their backward is a function of
// the forward input x, the gradient dy of the output and the ForwardInfo, so
// the stage keeps each layer's input per in-flight micro-batch (StageStack's
// activations, stage_stack.h). A layer whose backward needs more (a
// Transformer block's attention probabilities and intermediate values) hands
// it back from forward_keeping as a LayerState, which the stage keeps next to
// the input and passes to that micro-batch's backward_input_with and
// backward_weight_with. Dropping the inputs and states and re-running forward
// recomputes them exactly (dropout's mask is a function of ForwardInfo).
//
// Gradients accumulate: backward_weight adds into the gradient tensors, so the
// micro-batches of a step sum up; zero_grad clears them.
//
// Most tensor-parallel layers are split by the stage around them (a column- or
// row-parallel linear: the stage all-reduces their output or input gradient).
// A layer that splits itself (a vocabulary-parallel embedding, a Transformer
// block split by heads) needs collectives in the middle of its math, so the
// stage connects it to the tensor-parallel all-reduce instead
// (connect_all_reduce). Under sequence parallelism such layers take and give
// one shard's slice of the sequence, and the stage connects them to the
// gather and scatter as well (connect_sequence_parallel).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/model/model_spec.h"
#include "core/nn/all_reduce.h"
#include "core/nn/moe_routing.h"

namespace pipelab {

// Which micro-batch a forward (or its backward) is for.
struct ForwardInfo {
  int step = 0;              // training step: part of dropout's key
  int64_t first_sample = 0;  // index of row 0 within the step's whole (global) batch
  bool training = true;      // false (evaluation): dropout passes x through
};

// What one micro-batch's forward keeps for its backward beyond the layer's
// input. Its tensors are allocated as Activations on the layer's device, so
// memory curves count them; bytes() says how many for the stage's total.
class LayerState {
 public:
  virtual ~LayerState() = default;
  virtual int64_t bytes() const = 0;
};

// A LayerState that lists its tensors, so offloading can move them to host
// memory and back (StageStack::move_activations).
template <typename TensorT>
class MovableLayerState : public LayerState {
 public:
  virtual std::vector<TensorT*> tensors() = 0;
};

// A trainable tensor and its gradient (same shape).
template <typename TensorT>
struct BasicParameter {
  TensorT* value = nullptr;
  TensorT* grad = nullptr;
};

// TensorT: the backend's tensor; ContextT: what its layers allocate and
// compute with (a pointer: a host allocator, or a GPU's device context).
template <typename TensorT, typename ContextT>
class BasicLayer {
 public:
  // `index` is the layer's position in the whole model (keys its random numbers);
  // widths are this layer's (this shard's, under tensor parallelism).
  BasicLayer(LayerType type, int index, int64_t in_features, int64_t out_features,
             ContextT context)
      : type_(type),
        index_(index),
        in_features_(in_features),
        out_features_(out_features),
        context_(context) {}
  virtual ~BasicLayer() = default;
  BasicLayer(const BasicLayer&) = delete;
  BasicLayer& operator=(const BasicLayer&) = delete;

  LayerType type() const { return type_; }
  int index() const { return index_; }
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }

  // y = f(x): x is [batch, in_features], y is [batch, out_features].
  virtual TensorT forward(const TensorT& x, const ForwardInfo& info) = 0;
  // dL/dx [batch, in_features] from dy = dL/dy, for the x and info of the forward.
  virtual TensorT backward_input(const TensorT& x, const TensorT& dy, const ForwardInfo& info) = 0;
  // Adds dL/dW (and dL/db) for this micro-batch into grads(). Layers without
  // weights do nothing.
  virtual void backward_weight(const TensorT& x, const TensorT& dy) {
    (void)x;
    (void)dy;
  }
  // The same three for a micro-batch whose backward will run: forward_keeping
  // may set `state` (left empty by layers that need none) and the backward
  // halves read it. The defaults keep nothing, so stateless layers implement
  // only the three above.
  virtual TensorT forward_keeping(const TensorT& x, const ForwardInfo& info,
                                  std::unique_ptr<LayerState>& state) {
    (void)state;
    return forward(x, info);
  }
  virtual TensorT backward_input_with(const TensorT& x, const TensorT& dy, const ForwardInfo& info,
                                      LayerState* state) {
    (void)state;
    return backward_input(x, dy, info);
  }
  virtual void backward_weight_with(const TensorT& x, const TensorT& dy, LayerState* state) {
    (void)state;
    backward_weight(x, dy);
  }

  // Fused backward: backward_input then backward_weight.
  TensorT backward(const TensorT& x, const TensorT& dy, const ForwardInfo& info) {
    TensorT dx = backward_input(x, dy, info);
    backward_weight(x, dy);
    return dx;
  }

  // Sums a tensor over the tensor-parallel shards in place; in_forward says
  // whether the layer's forward or backward asks (the stage's all-reduces are
  // counted per direction, as the schedule lists them).
  using InnerAllReduce = std::function<void(TensorT& values, bool in_forward)>;
  // For layers that split themselves under tensor parallelism; the stage calls
  // it once, after building the layer. Other layers never communicate inside,
  // so being asked is a bug in the stage.
  virtual void connect_all_reduce(InnerAllReduce all_reduce) {
    (void)all_reduce;
    throw std::logic_error("layer " + std::to_string(index_) +
                           " does not split itself over tensor-parallel shards");
  }

  // Sequence parallelism's all-gather and reduce-scatter over the
  // tensor-parallel shards, in place on a whole-sequence tensor that the
  // shards cut into equal slices in shard order (all_reduce.h's
  // SequenceCollectives); in_forward as for InnerAllReduce.
  struct InnerSequenceCollectives {
    std::function<void(TensorT& values, bool in_forward)> all_gather;
    std::function<void(TensorT& values, bool in_forward)> reduce_scatter;
  };
  // For layers that split the sequence themselves; called once, after
  // connect_all_reduce.
  virtual void connect_sequence_parallel(InnerSequenceCollectives collectives) {
    (void)collectives;
    throw std::logic_error("layer " + std::to_string(index_) +
                           " does not split itself along the sequence");
  }
  // Context parallelism's all-gather and reduce-scatter over the
  // context-parallel group (the ranks splitting each sequence), as
  // InnerSequenceCollectives over theirs; the all-gather hands each rank's
  // slice to `arrived` (all_reduce.h's ContextCollectives; may be empty).
  // For layers that attend across the ranks' positions; called once, after
  // connect_all_reduce.
  struct InnerContextCollectives {
    std::function<void(TensorT& values, bool in_forward, const SliceArrival& arrived)> all_gather;
    std::function<void(TensorT& values, bool in_forward)> reduce_scatter;
  };
  virtual void connect_context_parallel(InnerContextCollectives collectives) {
    (void)collectives;
    throw std::logic_error("layer " + std::to_string(index_) +
                           " does not attend across context-parallel ranks");
  }
  // Synchronised batch norm: sums a layer's batch statistics over the
  // data-parallel replicas, in place (values in double; see batch_norm.h).
  using BatchStatisticsAllReduce = std::function<void(std::vector<double>& values)>;
  // For layers holding a batch norm whose statistics are synced; the stage
  // calls it once, after building the layer.
  virtual void connect_batch_statistics(BatchStatisticsAllReduce all_reduce) {
    (void)all_reduce;
    throw std::logic_error("layer " + std::to_string(index_) + " keeps no batch statistics to sync");
  }

  // Mixture-of-Experts: how a moe layer reaches the other members of its
  // expert-parallel group and tells the run what its routing did.
  struct ExpertConnection {
    // In place over ep equal chunks of rows: chunk j goes to member j, and
    // chunk i of the result came from member i; empty under ep = 1. in_forward
    // as for InnerAllReduce.
    std::function<void(TensorT& values, bool in_forward)> all_to_all;
    // Tokens of the whole step (every replica's micro-batches): a micro-batch's
    // auxiliary loss counts rows / step_tokens of it. 0: the micro-batch alone.
    double step_tokens = 0;
    // Called after each training forward with the routing and the auxiliary
    // loss this micro-batch adds to the step's (weighted).
    std::function<void(const ForwardInfo& info, const MoeRouting& routing, double aux_loss)> report;
  };
  virtual void connect_experts(ExpertConnection connection) {
    (void)connection;
    throw std::logic_error("layer " + std::to_string(index_) + " has no experts");
  }
  // The gradients of the experts this device holds (a subset of grads()),
  // which expert parallelism sums over fewer replicas than the others.
  virtual std::vector<TensorT*> expert_grads() { return {}; }

  // Under sequence parallelism: the gradients this shard takes from its slice
  // of the sequence only (a block's norm gains and biases), which the
  // tensor-parallel group sums once per step. A subset of grads().
  virtual std::vector<TensorT*> sequence_partial_grads() { return {}; }

  // Trainable tensors and their gradients, in matching order (empty if none).
  virtual std::vector<TensorT*> params() { return {}; }
  virtual std::vector<TensorT*> grads() { return {}; }
  bool has_params() { return !params().empty(); }
  // State the model carries that no gradient trains (BatchNorm's running
  // statistics): copied with the weights wherever a model is copied, e.g. for
  // evaluation.
  virtual std::vector<TensorT*> buffers() { return {}; }
  void zero_grad() {
    for (TensorT* grad : grads()) grad->set_zero();
  }

 protected:
  ContextT context_ptr() const { return context_; }

 private:
  const LayerType type_;
  const int index_;
  const int64_t in_features_;
  const int64_t out_features_;
  ContextT const context_;
};

}  // namespace pipelab
