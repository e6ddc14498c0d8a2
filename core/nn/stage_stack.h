// StageStack: the layers [begin, end) of a model as one pipeline stage (one
// tensor-parallel shard of it) holds them, with forward and backward over the
// stack. Written once for every backend: `Math` says what a tensor and a layer
// are and how a layer is built (HostStackMath in sequential.h for the CPU,
// DeviceStackMath in gpu/layers/sequential.h for CUDA), so the executor loop
// drives the CPU's Sequential and the GPU's GpuSequential the same way.
//
// The executor's life cycle of one micro-batch on a stage:
//   Activations saved;                               // one per in-flight micro-batch
//   y = stage.forward(std::move(x), info, saved);    // F: keeps each layer's input
//   ... optionally stage.drop_activations(saved) and later stage.recompute(saved)
//   dx = stage.backward(std::move(dy), saved);       // B (fused)
//     or: dx = stage.backward_input(std::move(dy), saved);  // BI
//         ... stage.backward_weight(saved);                 // BW, later
// Backward frees what it no longer needs as it goes; after B (or BW) `saved`
// holds nothing and can be destroyed or reused. Everything kept in `saved`,
// the stage input included, is counted as Activations.
//
// Weights are initialised from (seed, model layer index) only (init.h), so a
// stage or shard starts with exactly its slice of the single-device model, on
// every backend. Weight gradients accumulate across micro-batches until
// zero_grad().
//
// What Math provides:
//   Tensor, Layer, Context      the tensor type, the layer base, what layers are built on
//   build_layer(layout, seed, context) -> std::unique_ptr<Layer>
//   add_bias(layer, y)          a row-parallel linear's bias, added after the all-reduce
//   Scope(context)              held while the stack works (makes a GPU current)
// and, for sequence parallelism (a backend without them refuses it):
//   gather_sequence(local, slice, context, all_gather) -> whole
//   scatter_sequence(whole, slice, context, reduce_scatter) -> local
// over [samples, positions * width] tensors, as core/nn/sequence_split.h;
// and, to keep some layers' inputs in a form of its own (the CUDA backend's
// bf16 under bf16-mixed: gpu/layers/kept_layer_input.h; a backend without
// them keeps every input as it is):
//   keep_layer_input(layer, stage_input, gathers_sequence, input, state)
//                               after a training forward, may move `input`
//                               into `state` (the layer kept none)
//   holds_layer_input(state)    whether `state` is such an input
//   restore_layer_input(state, context) -> input, for the layer's backward
#pragma once

#include <cassert>
#include <concepts>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/model/model_spec.h"
#include "core/nn/basic_layer.h"
#include "core/nn/sequence_split.h"
#include "core/nn/stack_layout.h"
#include "core/plan/stage_profile.h"
#include "core/trace/trace_events.h"

namespace pipelab {

// Sums `tensor` over the tensor-parallel group, in place: every shard passes its
// partial and receives the total. `layer` is the model layer it follows and
// `in_forward` says which of the two Megatron all-reduces it is (as in
// TensorParallelAllReduce of stage_profile.h): true after a row-parallel
// linear's forward, false after a column-parallel linear's input gradient.
template <typename TensorT>
using BasicTensorParallelAllReduce = std::function<void(TensorT& tensor, int layer, bool in_forward)>;

// Sequence parallelism's all-gather or reduce-scatter (`collective`), in place
// on a whole-sequence `tensor` whose shard k's slice is its k-th 1/tp of the
// values (all_reduce.h's SequenceCollectives); layer and in_forward as above.
template <typename TensorT>
using BasicSequenceCollective =
    std::function<void(TensorParallelCollective collective, TensorT& tensor, int layer, bool in_forward)>;

// Context parallelism's all-gather or reduce-scatter, as above over the
// context-parallel group; an all-gather hands each rank's slice to `arrived`
// (empty: nothing to hand, and always for a reduce-scatter).
template <typename TensorT>
using BasicContextCollective =
    std::function<void(TensorParallelCollective collective, TensorT& tensor, int layer,
                       bool in_forward, const SliceArrival& arrived)>;

template <typename TensorT>
struct BasicTensorParallelSetup {
  int degree = 1;  // tp; 1 = no tensor parallelism
  int shard = 0;   // this shard, in [0, degree)
  // One role per layer of the whole model, from tensor_parallel_roles
  // (core/plan/stage_profile.h). Ignored when degree == 1.
  std::vector<TensorParallelRole> roles;
  BasicTensorParallelAllReduce<TensorT> all_reduce;  // required when degree > 1
  // Sequence parallelism (plan.sequence_parallel; needs degree > 1 and a
  // sequence model to change anything), and its collectives (required then).
  bool sequence_parallel = false;
  BasicSequenceCollective<TensorT> sequence_collective;
  // Context parallelism (plan.cp > 1, in a sequence model): this rank of cp
  // and the all-gather and reduce-scatter over the context-parallel group
  // (required then), which the Transformer blocks' attention runs; the
  // all-gather hands each rank's slice to `arrived` as it lands
  // (all_reduce.h's ContextCollectives).
  int cp = 1;
  int context = 0;
  BasicContextCollective<TensorT> context_collective;
};

// What a stage keeps for the output layer under sequence parallelism: its
// input gathered over the whole sequence, which its backward reads.
template <typename TensorT>
struct GatheredSequence : MovableLayerState<TensorT> {
  TensorT whole;
  int64_t bytes() const override { return whole.bytes(); }
  std::vector<TensorT*> tensors() override { return {&whole}; }
};

// What one micro-batch's forward on a stage keeps for its backward.
template <typename TensorT>
struct BasicStageActivations {
  ForwardInfo info;
  std::vector<TensorT> inputs;        // inputs[k]: input of the stage's k-th layer; [0] = stage input
  std::vector<TensorT> output_grads;  // between BI and BW: dL/dy of the k-th layer (layers with weights)
  // states[k]: what the k-th layer's forward kept beyond its input (empty for
  // most layers; see LayerState in basic_layer.h).
  std::vector<std::unique_ptr<LayerState>> states;

  int64_t bytes() const {
    int64_t total = 0;
    for (const TensorT& t : inputs) total += t.bytes();
    for (const TensorT& t : output_grads) total += t.bytes();
    for (const auto& state : states)
      if (state) total += state->bytes();
    return total;
  }
};

template <typename Math>
class StageStack {
 public:
  using Tensor = typename Math::Tensor;
  using Layer = typename Math::Layer;
  using Context = typename Math::Context;
  using Parameter = BasicParameter<Tensor>;
  using Activations = BasicStageActivations<Tensor>;
  using TensorParallelSetup = BasicTensorParallelSetup<Tensor>;

  // Builds model layers [begin, end) on `context`. Throws std::invalid_argument
  // naming the field when the model cannot be built (stack_layout checks it:
  // an empty or non-positive input shape, a range outside the layer list, a
  // linear with out <= 0, a dropout p outside [0, 1), or a tensor-parallel
  // setup that does not fit). `selective_recompute`: Transformer blocks keep no
  // attention probabilities (the plan's selective recompute).
  // `experts`: which experts of each moe layer this device holds (expert parallelism).
  // `built(stack, k)`, when given, runs as soon as the k-th layer is built and
  // connected, before the next is: ZeRO 3 slices each layer's weights there,
  // so the stage never holds all of them whole.
  using BuiltLayer = std::function<void(StageStack& stack, int k)>;
  StageStack(const ModelSpec& model, int begin, int end, uint64_t seed, Context context,
             TensorParallelSetup tensor_parallel = {}, bool selective_recompute = false,
             ExpertShard experts = {}, const BuiltLayer& built = {})
      : begin_(begin), context_(context) {
    std::vector<LayerLayout> layout = stack_layout(
        model, begin, end,
        {tensor_parallel.degree, tensor_parallel.shard, tensor_parallel.roles,
         static_cast<bool>(tensor_parallel.all_reduce), tensor_parallel.sequence_parallel,
         tensor_parallel.cp, tensor_parallel.context});
    all_reduce_ = std::move(tensor_parallel.all_reduce);
    sequence_collective_ = std::move(tensor_parallel.sequence_collective);
    context_collective_ = std::move(tensor_parallel.context_collective);
    input_features_ = layout.front().in;
    typename Math::Scope scope(context_);
    for (LayerLayout& layer : layout) {
      layer.selective_recompute = selective_recompute;
      if (has_experts(layer.spec)) {
        layer.ep = experts.ep;
        layer.ep_rank = experts.rank;
      }
      if (layer.sequence_shards > 1 || layer.gathers_sequence) check_sequence_parallel(layer);
      layers_.push_back(Math::build_layer(layer, seed, context_));
      roles_.push_back(layer.role);
      const int index = layer.index;
      if (splits_itself(layer))
        layers_.back()->connect_all_reduce(
            [this, index](Tensor& values, bool in_forward) { all_reduce_(values, index, in_forward); });
      // A moe layer gathers the sequence itself too (moe_layer.h), though it is not split.
      if ((splits_itself(layer) || layer.spec.type == LayerType::Moe) && layer.sequence_shards > 1)
        layers_.back()->connect_sequence_parallel(
            {[this, index](Tensor& values, bool in_forward) {
               sequence_collective_(TensorParallelCollective::AllGather, values, index, in_forward);
             },
             [this, index](Tensor& values, bool in_forward) {
               sequence_collective_(TensorParallelCollective::ReduceScatter, values, index, in_forward);
             }});
      if (layer.spec.type == LayerType::TransformerBlock && layer.cp > 1) {
        if (!context_collective_)
          throw std::invalid_argument("context parallelism needs the context_collective function");
        layers_.back()->connect_context_parallel(
            {[this, index](Tensor& values, bool in_forward, const SliceArrival& arrived) {
               context_collective_(TensorParallelCollective::AllGather, values, index, in_forward,
                                   arrived);
             },
             [this, index](Tensor& values, bool in_forward) {
               context_collective_(TensorParallelCollective::ReduceScatter, values, index,
                                   in_forward, {});
             }});
      }
      routes_experts_.push_back(has_experts(layer.spec));
      blocks_.push_back(layer.spec.type == LayerType::TransformerBlock);
      synced_batch_norm_.push_back(layer.spec.sync && (layer.spec.type == LayerType::BatchNorm ||
                                                       layer.spec.type == LayerType::ResidualBlock));
      slices_.push_back(slice_of(layer));
      gathers_.push_back(layer.gathers_sequence);
      sequence_partial_.push_back(layer.sequence_partial());
      if (built) built(*this, layer_count() - 1);
    }
  }
  StageStack(const StageStack&) = delete;
  StageStack& operator=(const StageStack&) = delete;

  int begin() const { return begin_; }
  int end() const { return begin_ + layer_count(); }
  int layer_count() const { return static_cast<int>(layers_.size()); }
  Layer& layer(int k) { return *layers_[k]; }  // the stage's k-th layer (model layer begin + k)
  TensorParallelRole role(int k) const { return roles_[k]; }
  int64_t input_features() const { return input_features_; }                 // this shard's
  int64_t output_features() const { return layers_.back()->out_features(); }  // this shard's
  Context context() const { return context_; }

  // Synchronised batch norm (a batchnorm or residual_block with sync: true):
  // such layers sum their batch statistics over the data-parallel replicas
  // through `all_reduce(values, model layer)`. Without a call (dp = 1) they
  // use their own micro-batch's.
  void connect_batch_statistics(const std::function<void(std::vector<double>&, int layer)>& all_reduce) {
    for (int k = 0; k < layer_count(); ++k) {
      if (!synced_batch_norm_[k]) continue;
      const int index = begin_ + k;
      layers_[k]->connect_batch_statistics([all_reduce, index](std::vector<double>& values) { all_reduce(values, index); });
    }
  }

  // Mixture-of-Experts layers (moe, and blocks with experts): each calls report(model layer, info,
  // routing, aux_loss) after a training forward (BasicLayer::ExpertConnection, with step_tokens),
  // and under expert parallelism exchanges its tokens through all_to_all(values, model layer,
  // in_forward).
  using ExpertReport = std::function<void(int layer, const ForwardInfo&, const MoeRouting&, double aux_loss)>;
  using ExpertAllToAll = std::function<void(Tensor& values, int layer, bool in_forward)>;
  void connect_experts(const ExpertReport& report, double step_tokens, const ExpertAllToAll& all_to_all) {
    for (int k = 0; k < layer_count(); ++k) {
      if (!routes_experts_[k]) continue;
      const int index = begin_ + k;
      typename Layer::ExpertConnection connection;
      connection.step_tokens = step_tokens;
      connection.report = [report, index](const ForwardInfo& info, const MoeRouting& routing, double aux) {
        report(index, info, routing, aux);
      };
      if (all_to_all)
        connection.all_to_all = [all_to_all, index](Tensor& values, bool in_forward) {
          all_to_all(values, index, in_forward);
        };
      layers_[k]->connect_experts(std::move(connection));
    }
  }

  // ZeRO 3 (FSDP's units: each layer with weights is one): the executor's
  // acquire(k) runs before layer k's forward, backward or weight gradient
  // and release(k) after it, so that it gathers the layer's weights from the
  // replicas' shards just for that use and frees them again. Unset: nothing.
  struct WeightUnits {
    std::function<void(int k)> acquire;
    std::function<void(int k)> release;
  };
  void connect_weight_units(WeightUnits units) { units_ = std::move(units); }

  // Layer k's trainable tensors with their gradients (one ZeRO 3 unit).
  std::vector<Parameter> layer_parameters(int k) {
    const std::vector<Tensor*> values = layers_[k]->params();
    const std::vector<Tensor*> grads = layers_[k]->grads();
    assert(values.size() == grads.size());
    std::vector<Parameter> result;
    for (size_t i = 0; i < values.size(); ++i) result.push_back({values[i], grads[i]});
    return result;
  }

  // The gradients of the experts this device holds (expert parallelism sums
  // them over fewer replicas than the rest).
  std::vector<Tensor*> expert_grads() {
    std::vector<Tensor*> grads;
    for (auto& layer : layers_) {
      const std::vector<Tensor*> experts = layer->expert_grads();
      grads.insert(grads.end(), experts.begin(), experts.end());
    }
    return grads;
  }

  // F: y for the stage input `input` [batch, input_features()], which `saved`
  // takes over (retagged Activations), with every later layer's input.
  Tensor forward(Tensor input, const ForwardInfo& info, Activations& saved) {
    assert(input.cols() == input_features());
    typename Math::Scope scope(context_);
    input.retag(MemoryCategory::Activations);
    saved.info = info;
    saved.inputs.clear();
    saved.inputs.resize(layers_.size());
    saved.output_grads.clear();
    saved.output_grads.resize(layers_.size());
    saved.states.clear();
    saved.states.resize(layers_.size());
    saved.inputs[0] = std::move(input);
    return forward_keeping_inputs(saved, /*drop_groups=*/!group_start_.empty());
  }

  // Forward keeping nothing (evaluation, or a forward-only pass).
  Tensor infer(const Tensor& input, const ForwardInfo& info) {
    assert(input.cols() == input_features());
    typename Math::Scope scope(context_);
    Tensor current = layer_forward(0, input, info);
    for (int k = 1; k < layer_count(); ++k) current = layer_forward(k, current, info);
    return current;
  }

  // Full recomputation by block (plan.recompute_blocks, Megatron-LM's
  // uniform method): Transformer blocks in groups of `blocks_per_group`
  // consecutive ones (a layer that is not a block ends a group). The forward
  // keeps each group's input and every other layer's activations, and drops
  // the rest of a group as soon as the group has run; the backward rebuilds
  // one group at a time from its kept input just before it needs it. Then
  // drop_activations and recompute have nothing left to do. Unset: the stage
  // is the unit (drop_activations frees all but its input, recompute rebuilds it).
  void recompute_blocks_in_groups(int blocks_per_group) {
    assert(blocks_per_group >= 1);
    group_start_.assign(layers_.size(), -1);
    int start = -1, in_group = 0;
    for (int k = 0; k < layer_count(); ++k) {
      if (!blocks_[k]) {
        start = -1;
        continue;
      }
      if (start < 0 || in_group == blocks_per_group) start = k, in_group = 0;
      group_start_[k] = start;
      ++in_group;
    }
  }

  // Frees every saved layer input but the stage input, and every layer state,
  // to rebuild them later (by block: the forward did it already).
  void drop_activations(Activations& saved) const {
    if (!group_start_.empty()) return;
    for (size_t k = 1; k < saved.inputs.size(); ++k) saved.inputs[k].reset();
    for (auto& state : saved.states) state.reset();
  }

  // Rebuilds the inputs drop_activations freed (bit-identical: dropout's mask is
  // a function of the saved ForwardInfo). Under tensor parallelism this calls
  // the forward all-reduces again, as Megatron's recomputation does. By
  // block, the backward rebuilds each group when it reaches it.
  void recompute(Activations& saved) {
    assert(saved.inputs.size() == layers_.size() && !saved.inputs[0].empty());
    assert(saved.states.size() == layers_.size());
    if (!group_start_.empty()) return;
    typename Math::Scope scope(context_);
    forward_keeping_inputs(saved);  // the stage output was sent already; it is dropped here
  }

  // Offloading: applies `move` (the backend's copy to host memory, or back to
  // the device; it returns the bytes it moved) to every tensor slot `saved`
  // holds, layer states included, empty ones too (a backend may empty a slot
  // it offloaded); returns the bytes moved. Copies, so the backward reads
  // bit-identical values.
  template <typename Move>
  int64_t move_activations(Activations& saved, Move&& move) {
    typename Math::Scope scope(context_);
    int64_t bytes = 0;
    auto move_one = [&](Tensor& tensor) { bytes += move(tensor); };
    for (Tensor& tensor : saved.inputs) move_one(tensor);
    for (Tensor& tensor : saved.output_grads) move_one(tensor);
    for (auto& state : saved.states)
      if (auto* movable = dynamic_cast<MovableLayerState<Tensor>*>(state.get()))
        for (Tensor* tensor : movable->tensors()) move_one(*tensor);
    return bytes;
  }

  // B: from dL/d(stage output), adds every weight gradient and returns dL/d(stage
  // input), or an empty tensor when begin == 0 (the data needs no gradient).
  Tensor backward(Tensor output_grad, Activations& saved) {
    return backward_pass(std::move(output_grad), saved, /*fused=*/true);
  }

  // BI: returns dL/d(stage input) (empty when begin == 0); keeps in `saved` what
  // backward_weight needs (the inputs and output gradients of layers with weights).
  Tensor backward_input(Tensor output_grad, Activations& saved) {
    return backward_pass(std::move(output_grad), saved, /*fused=*/false);
  }

  // BW: adds the weight gradients of a micro-batch whose backward_input ran.
  void backward_weight(Activations& saved) {
    assert(saved.inputs.size() == layers_.size() && saved.output_grads.size() == layers_.size() &&
           saved.states.size() == layers_.size());
    typename Math::Scope scope(context_);
    for (int k = layer_count() - 1; k >= 0; --k) {
      if (saved.output_grads[k].empty()) continue;
      const UnitUse use(*this, k);
      with_backward_input(k, saved, [&](const Tensor& input, LayerState* state) {
        layers_[k]->backward_weight_with(input_of(k, input, state), saved.output_grads[k], state);
      });
      saved.inputs[k].reset();
      saved.output_grads[k].reset();
      saved.states[k].reset();
    }
    saved.inputs.clear();
    saved.output_grads.clear();
    saved.states.clear();
  }

  // Every trainable tensor with its gradient, layer by layer (for an optimizer,
  // a data-parallel all-reduce, or weight stashing by swapping tensors).
  std::vector<Parameter> parameters() {
    std::vector<Parameter> result;
    for (int k = 0; k < layer_count(); ++k) {
      const std::vector<Parameter> own = layer_parameters(k);
      result.insert(result.end(), own.begin(), own.end());
    }
    return result;
  }

  // What no gradient trains (batch norm's running statistics), layer by layer.
  std::vector<Tensor*> buffers() {
    std::vector<Tensor*> result;
    for (auto& layer : layers_) {
      const std::vector<Tensor*> own = layer->buffers();
      result.insert(result.end(), own.begin(), own.end());
    }
    return result;
  }

  // Under sequence parallelism, the gradients this shard took from its slice
  // of the sequence only (norm gains and biases, replicated layers'), which
  // the tensor-parallel group sums once per step, before the update.
  std::vector<Tensor*> sequence_partial_grads() {
    std::vector<Tensor*> partial;
    for (int k = 0; k < layer_count(); ++k) {
      const std::vector<Tensor*> grads = layer_sequence_partial_grads(k);
      partial.insert(partial.end(), grads.begin(), grads.end());
    }
    return partial;
  }
  std::vector<Tensor*> layer_sequence_partial_grads(int k) {  // the k-th layer's
    return sequence_partial_[k] ? layers_[k]->grads() : layers_[k]->sequence_partial_grads();
  }

  int64_t parameter_count() const {  // trainable scalars this shard holds
    int64_t count = 0;
    for (const auto& layer : layers_)
      for (Tensor* value : layer->params()) count += value->size();
    return count;
  }

  void zero_grad() {
    typename Math::Scope scope(context_);
    for (auto& layer : layers_) layer->zero_grad();
  }

 private:
  // A layer whose collectives sit inside its own math (stage_profile.h's
  // VocabParallel embedding and BlockParallel block) rather than around it.
  static bool splits_itself(const LayerLayout& layer) {
    return layer.tp > 1 && (layer.role == TensorParallelRole::VocabParallel ||
                            layer.role == TensorParallelRole::BlockParallel);
  }

  // Layer k's weights for as long as it lives (WeightUnits), when it has any.
  class UnitUse {
   public:
    // Asked of every layer: a released layer's params() may list fewer
    // tensors (optional ones are known by being empty), so the executor,
    // which knows each layer's, decides.
    UnitUse(StageStack& stack, int k)
        : stack_(stack), k_(k), exceptions_(std::uncaught_exceptions()) {
      active_ = static_cast<bool>(stack.units_.acquire);
      if (active_) stack_.units_.acquire(k_);
    }
    // Not while an error unwinds the stack: release may run collectives,
    // which the other members would never join.
    ~UnitUse() {
      if (active_ && std::uncaught_exceptions() == exceptions_) stack_.units_.release(k_);
    }
    UnitUse(const UnitUse&) = delete;
    UnitUse& operator=(const UnitUse&) = delete;

   private:
    StageStack& stack_;
    int k_;
    int exceptions_;
    bool active_ = false;
  };

  // Refuses sequence parallelism on a backend without its Math hooks.
  void check_sequence_parallel(const LayerLayout& layer) const {
    if constexpr (!kRunsSequenceParallel)
      throw std::invalid_argument("layer " + std::to_string(layer.index) +
                                  ": this backend does not run sequence parallelism; set "
                                  "parallel.sequence_parallel = false or use the cpu backend");
    if (!sequence_collective_)
      throw std::invalid_argument("sequence parallelism needs the sequence_collective function");
  }

  // The slice a layer's input holds (its batch is set per call).
  static SequenceSlice slice_of(const LayerLayout& layer) {
    return {layer.sequence_shards, layer.sequence_shard, 0, layer.local_tokens()};
  }
  SequenceSlice slice_for(int k, const Tensor& x) const {
    SequenceSlice slice = slices_[k];
    slice.batch = x.rows();
    return slice;
  }

  // The output layer's input over the whole sequence, from this shard's slice.
  Tensor gathered_input(int k, const Tensor& local, bool in_forward) {
    if constexpr (kRunsSequenceParallel) {
      return Math::gather_sequence(local, slice_for(k, local), context_, [&](Tensor& values) {
        sequence_collective_(TensorParallelCollective::AllGather, values, begin_ + k, in_forward);
      });
    } else {
      (void)k, (void)in_forward, (void)local;
      throw std::logic_error("not reached: the stage refused sequence parallelism");
    }
  }

  // What layer k's backward reads as its input: the saved one, or the whole
  // sequence the output layer's forward gathered.
  const Tensor& input_of(int k, const Tensor& saved_input, LayerState* state) const {
    if (!gathers_[k] || !state) return saved_input;
    return static_cast<GatheredSequence<Tensor>*>(state)->whole;
  }

  // `state`, when given, receives what the layer keeps for this micro-batch's
  // backward; without it (inference) the layer keeps nothing.
  Tensor layer_forward(int k, const Tensor& x, const ForwardInfo& info,
                       std::unique_ptr<LayerState>* state = nullptr) {
    const UnitUse use(*this, k);
    if (gathers_[k]) {
      auto kept = std::make_unique<GatheredSequence<Tensor>>();
      kept->whole = gathered_input(k, x, true);
      Tensor y = layers_[k]->forward(kept->whole, info);  // a linear keeps no state of its own
      if (state) *state = std::move(kept);
      return y;
    }
    Tensor y = state ? layers_[k]->forward_keeping(x, info, *state) : layers_[k]->forward(x, info);
    if (roles_[k] == TensorParallelRole::RowParallel) {
      all_reduce_(y, begin_ + k, true);
      Math::add_bias(*layers_[k], y);
    }
    return y;
  }

  Tensor layer_input_grad(int k, const Tensor& x, const Tensor& dy, const ForwardInfo& info,
                          LayerState* state) {
    if (gathers_[k]) {
      // The whole sequence's partial input gradient, scattered back onto the slices.
      const Tensor whole = state ? Tensor() : gathered_input(k, x, false);
      const Tensor dx_whole = layers_[k]->backward_input_with(state ? input_of(k, x, state) : whole,
                                                              dy, info, nullptr);
      if constexpr (kRunsSequenceParallel) {
        return Math::scatter_sequence(dx_whole, slice_for(k, dx_whole), context_, [&](Tensor& values) {
          sequence_collective_(TensorParallelCollective::ReduceScatter, values, begin_ + k, false);
        });
      }
    }
    Tensor dx = layers_[k]->backward_input_with(x, dy, info, state);
    if (roles_[k] == TensorParallelRole::ColumnParallel) all_reduce_(dx, begin_ + k, false);
    return dx;
  }

  bool needs_input_grad(int k) const { return k > 0 || begin_ > 0; }

  // Runs forward from saved.inputs[0], keeping every layer input; returns y.
  // `drop_groups`: recomputation by block drops each group's activations but
  // its input once the group has run (recompute_blocks_in_groups).
  Tensor forward_keeping_inputs(Activations& saved, bool drop_groups = false) {
    const int last = layer_count() - 1;
    for (int k = 0; k < last; ++k) {
      saved.inputs[k + 1] = layer_forward(k, saved.inputs[k], saved.info, &saved.states[k]);
      keep_layer_input(k, saved);
      if (drop_groups && ends_group(k)) drop_group(group_start_[k], k, saved);
    }
    Tensor y = layer_forward(last, saved.inputs[last], saved.info, &saved.states[last]);
    keep_layer_input(last, saved);
    if (drop_groups && ends_group(last)) drop_group(group_start_[last], last, saved);
    return y;
  }

  // Recomputation by block (recompute_blocks_in_groups): whether layer k is
  // the last block of its group.
  bool ends_group(int k) const {
    return !group_start_.empty() && group_start_[k] >= 0 &&
           (k + 1 == layer_count() || group_start_[k + 1] != group_start_[k]);
  }

  // Frees what layers [first, last] kept but the group's input (which Math
  // may hold in the first layer's state).
  void drop_group(int first, int last, Activations& saved) const {
    for (int j = first; j <= last; ++j) {
      if (j > first) saved.inputs[j].reset();
      if constexpr (kKeepsLayerInputs)
        if (j == first && Math::holds_layer_input(saved.states[j].get())) continue;
      saved.states[j].reset();
    }
  }

  // Before the backward reaches the last block of a dropped group: its
  // layers' inputs and states again, from the group's input.
  void rebuild_group(int first, int last, Activations& saved) {
    if constexpr (kKeepsLayerInputs)
      if (saved.inputs[first].empty())
        saved.inputs[first] = Math::restore_layer_input(*saved.states[first], context_);
    for (int j = first; j <= last; ++j) {
      Tensor y = layer_forward(j, saved.inputs[j], saved.info, &saved.states[j]);
      keep_layer_input(j, saved);
      if (j < last) saved.inputs[j + 1] = std::move(y);  // the group's output is kept already
    }
  }

  // Lets Math keep layer k's input, once the layer's forward has read it, in
  // a form of its own (see the top of this file).
  void keep_layer_input(int k, Activations& saved) {
    if constexpr (kKeepsLayerInputs)
      Math::keep_layer_input(*layers_[k], k == 0, gathers_[k], saved.inputs[k], saved.states[k]);
    else
      (void)k, (void)saved;
  }

  // Calls use(input, state) with what layer k's backward reads: its saved
  // input and state, or the input Math kept itself, restored for the call
  // (the layer then has no state of its own).
  template <typename Use>
  void with_backward_input(int k, Activations& saved, Use&& use) {
    LayerState* state = saved.states[k].get();
    if constexpr (kKeepsLayerInputs) {
      if (Math::holds_layer_input(state)) {
        const Tensor input = Math::restore_layer_input(*state, context_);
        use(input, static_cast<LayerState*>(nullptr));
        return;
      }
    }
    use(static_cast<const Tensor&>(saved.inputs[k]), state);
  }

  // B or BI, last layer first. Fused: each layer's weight gradient right after
  // its input gradient, freeing its input and state. Split: layers with
  // weights keep their input, state and output gradient for BW.
  Tensor backward_pass(Tensor output_grad, Activations& saved, bool fused) {
    assert(saved.inputs.size() == layers_.size());
    typename Math::Scope scope(context_);
    Tensor grad = std::move(output_grad);
    for (int k = layer_count() - 1; k >= 0; --k) {
      // A block's forward always keeps a state: none means its group was dropped.
      if (ends_group(k) && !saved.states[k]) rebuild_group(group_start_[k], k, saved);
      Tensor input_grad;
      const UnitUse use(*this, k);
      with_backward_input(k, saved, [&](const Tensor& input, LayerState* state) {
        if (needs_input_grad(k)) input_grad = layer_input_grad(k, input, grad, saved.info, state);
        if (fused) layers_[k]->backward_weight_with(input_of(k, input, state), grad, state);
      });
      if (fused) {
        saved.inputs[k].reset();
        saved.states[k].reset();
      } else if (layers_[k]->has_params()) {
        grad.retag(MemoryCategory::Activations);
        saved.output_grads[k] = std::move(grad);  // with inputs[k] and states[k], what BW needs
      } else {
        saved.inputs[k].reset();
        saved.states[k].reset();
      }
      grad = std::move(input_grad);
    }
    if (fused) {
      saved.inputs.clear();
      saved.output_grads.clear();
      saved.states.clear();
    }
    return grad;
  }

  // Whether Math has sequence parallelism's hooks (see the top of this file).
  static constexpr bool kRunsSequenceParallel = requires(const Tensor& t, const SequenceSlice& slice,
                                                         Context context,
                                                         std::function<void(Tensor&)> collective) {
    Math::gather_sequence(t, slice, context, collective);
    Math::scatter_sequence(t, slice, context, collective);
  };

  // Whether Math keeps some layer inputs itself (see the top of this file).
  static constexpr bool kKeepsLayerInputs =
      requires(Layer& layer, Tensor& input, std::unique_ptr<LayerState>& state, Context context) {
        Math::keep_layer_input(layer, true, true, input, state);
        { Math::holds_layer_input(state.get()) } -> std::same_as<bool>;
        { Math::restore_layer_input(*state, context) } -> std::same_as<Tensor>;
      };

  const int begin_;
  Context context_;
  int64_t input_features_ = 0;  // the first layer's, as this shard receives it
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<TensorParallelRole> roles_;  // per stage layer; Replicated without tp
  std::vector<char> routes_experts_;       // per stage layer: a moe layer or a block with experts
  std::vector<char> blocks_;               // per stage layer: a Transformer block
  // Recomputation by block: per stage layer, the first layer of its group
  // (-1 for a layer that is not a block); empty when the stage is the unit.
  std::vector<int> group_start_;
  BasicTensorParallelAllReduce<Tensor> all_reduce_;
  BasicSequenceCollective<Tensor> sequence_collective_;
  BasicContextCollective<Tensor> context_collective_;  // cp > 1
  WeightUnits units_;
  // Per stage layer, under sequence parallelism: the slice its input holds,
  // whether it gathers that input (the output layer), and whether its
  // gradients are partial (LayerLayout::sequence_partial).
  std::vector<SequenceSlice> slices_;
  std::vector<char> synced_batch_norm_;  // per stage layer: sums its statistics over the replicas
  std::vector<char> gathers_;
  std::vector<char> sequence_partial_;
};

}  // namespace pipelab
