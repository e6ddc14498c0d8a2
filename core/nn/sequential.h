// Sequential: the layers [begin, end) of a model, as one pipeline stage (one
// tensor-parallel shard of it) holds them, with forward and backward over the
// stack.
//
// The executor's life cycle of one micro-batch on a stage:
//   StageActivations saved;                      // one per in-flight micro-batch
//   Tensor y = stage.forward(std::move(x), info, saved);   // F: keeps each layer's input
//   ... optionally stage.drop_activations(saved) and later stage.recompute(saved)
//   Tensor dx = stage.backward(std::move(dy), saved);      // B (fused)
//     or: dx = stage.backward_input(std::move(dy), saved);  // BI
//         ... stage.backward_weight(saved);                 // BW, later
// Backward frees what it no longer needs as it goes; after B (or BW) `saved`
// holds nothing and can be destroyed or reused. Everything kept in `saved`,
// the stage input included, is counted as Activations.
//
// Weights are initialised from (seed, model layer index) only (init.h), so a
// stage or shard starts with exactly its slice of the single-device model.
// Weight gradients accumulate across micro-batches until zero_grad().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/model/model_spec.h"
#include "core/nn/layer.h"
#include "core/nn/optimizer.h"
#include "core/plan/stage_profile.h"

namespace pipelab {

// Sums `tensor` over the tensor-parallel group, in place: every shard passes its
// partial and receives the total. `layer` is the model layer it follows and
// `in_forward` says which of the two Megatron all-reduces it is (as in
// TensorParallelAllReduce of stage_profile.h): true after a row-parallel
// linear's forward, false after a column-parallel linear's input gradient.
using TensorParallelAllReduceFunction =
    std::function<void(Tensor& tensor, int layer, bool in_forward)>;

struct TensorParallelSetup {
  int degree = 1;  // tp; 1 = no tensor parallelism
  int shard = 0;   // this shard, in [0, degree)
  // One role per layer of the whole model, from tensor_parallel_roles
  // (core/plan/stage_profile.h). Ignored when degree == 1.
  std::vector<TensorParallelRole> roles;
  TensorParallelAllReduceFunction all_reduce;  // required when degree > 1
};

// What one micro-batch's forward on a stage keeps for its backward.
struct StageActivations {
  ForwardInfo info;
  std::vector<Tensor> inputs;  // inputs[k]: input of the stage's k-th layer; [0] = stage input
  std::vector<Tensor>
      output_grads;  // between BI and BW: dL/dy of the k-th layer (layers with weights)

  int64_t bytes() const;
};

class Sequential {
 public:
  // Builds model layers [begin, end) on `allocator` (may be nullptr: uncounted).
  // Throws std::invalid_argument naming the field when the model cannot be
  // built: an empty or non-positive input shape, a range outside the layer
  // list, a linear with out <= 0, a dropout p outside [0, 1), or a tensor-
  // parallel setup that does not fit (roles of the wrong size or kind, a width
  // tp does not divide, a missing all_reduce).
  Sequential(const ModelSpec& model, int begin, int end, uint64_t seed, DeviceAllocator* allocator,
             TensorParallelSetup tensor_parallel = {});

  int begin() const { return begin_; }
  int end() const { return begin_ + layer_count(); }
  int layer_count() const { return static_cast<int>(layers_.size()); }
  Layer& layer(int k) { return *layers_[k]; }  // the stage's k-th layer (model layer begin + k)
  TensorParallelRole role(int k) const { return roles_[k]; }
  int64_t input_features() const { return layers_.front()->in_features(); }   // this shard's
  int64_t output_features() const { return layers_.back()->out_features(); }  // this shard's

  // F: y for the stage input `input` [batch, input_features()], which `saved`
  // takes over, with every later layer's input.
  Tensor forward(Tensor input, const ForwardInfo& info, StageActivations& saved);
  // Forward keeping nothing (evaluation, or a forward-only pass).
  Tensor infer(const Tensor& input, const ForwardInfo& info);

  // Frees every saved layer input but the stage input, to rebuild them later.
  void drop_activations(StageActivations& saved) const;
  // Rebuilds the inputs drop_activations freed (bit-identical: dropout's mask is
  // a function of the saved ForwardInfo). Under tensor parallelism this calls
  // the forward all-reduces again, as Megatron's recomputation does.
  void recompute(StageActivations& saved);

  // B: from dL/d(stage output), adds every weight gradient and returns dL/d(stage
  // input), or an empty tensor when begin == 0 (the data needs no gradient).
  Tensor backward(Tensor output_grad, StageActivations& saved);
  // BI: returns dL/d(stage input) (empty when begin == 0); keeps in `saved` what
  // backward_weight needs (the inputs and output gradients of layers with weights).
  Tensor backward_input(Tensor output_grad, StageActivations& saved);
  // BW: adds the weight gradients of a micro-batch whose backward_input ran.
  void backward_weight(StageActivations& saved);

  // Every trainable tensor with its gradient, layer by layer (for an optimizer,
  // a data-parallel all-reduce, or weight stashing by swapping tensors).
  std::vector<Parameter> parameters();
  int64_t parameter_count() const;  // trainable scalars this shard holds
  void zero_grad();

 private:
  Tensor layer_forward(int k, const Tensor& x, const ForwardInfo& info);
  Tensor layer_input_grad(int k, const Tensor& x, const Tensor& dy, const ForwardInfo& info);
  bool needs_input_grad(int k) const { return k > 0 || begin_ > 0; }
  // Runs forward from saved.inputs[0], keeping every layer input; returns y.
  Tensor forward_keeping_inputs(StageActivations& saved);

  const int begin_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<TensorParallelRole> roles_;  // per stage layer; Replicated without tp
  TensorParallelAllReduceFunction all_reduce_;
};

}  // namespace pipelab
