#include "core/nn/moe_layer.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/nn/activations.h"
#include "core/nn/counter_rng.h"
#include "core/nn/init.h"
#include "core/nn/linear.h"
#include "core/nn/sequence_split.h"

namespace pipelab {

// What a micro-batch's forward keeps for its backward (all Activations).
struct MoeLayer::Kept : MovableLayerState<Tensor> {
  Tensor probabilities;  // [rows, E]
  Tensor expert_input;   // [L x ep x capacity, dim], expert-major
  Tensor hidden;         // [L x ep x capacity, ffn], before GELU
  Tensor returned;       // [E x capacity, dim]: the experts' outputs for this device's slots
  MoeRouting routing;

  int64_t bytes() const override {
    return probabilities.bytes() + expert_input.bytes() + hidden.bytes() + returned.bytes();
  }
  std::vector<Tensor*> tensors() override {
    return {&probabilities, &expert_input, &hidden, &returned};
  }
};

namespace {

// Rows [first, first + count) of `t` as a writable [count, cols] view.
Tensor rows_of(const Tensor& t, int64_t first, int64_t count) {
  Tensor rows = Tensor::borrow(const_cast<float*>(t.row(first)), count * t.cols());
  rows.reshape(count, t.cols());
  return rows;
}

// Words of the MixtureOfExperts stream: the gate, then four per global expert.
constexpr uint64_t kGateWord = 0;
uint64_t expert_word(int64_t expert, int part) {
  return 1 + 4 * static_cast<uint64_t>(expert) + part;
}

}  // namespace

MoeLayer::MoeLayer(int index, const MoeShape& shape, double aux_loss_weight, ExpertShard shard,
                   DeviceAllocator* allocator, MoeSequenceSlice sequence)
    : Layer(LayerType::Moe, index, shape.tokens * shape.dim / std::max(sequence.shards, 1),
            shape.tokens * shape.dim / std::max(sequence.shards, 1), allocator),
      shape_(shape),
      aux_loss_weight_(aux_loss_weight),
      shard_(shard),
      sequence_(sequence),
      gate_(shape.dim, shape.experts, allocator, MemoryCategory::Weights),
      gate_grad_(shape.dim, shape.experts, allocator, MemoryCategory::Gradients) {
  if (shard.ep < 1 || shape.experts % shard.ep != 0 || shard.rank < 0 || shard.rank >= shard.ep)
    throw std::invalid_argument("layer " + std::to_string(index) + ": " +
                                std::to_string(shape.experts) +
                                " experts cannot be split over ep = " + std::to_string(shard.ep) +
                                "; choose an ep that divides the experts");
  if (shard.tp < 1 || shape.ffn % shard.tp != 0 || shard.tp_shard < 0 || shard.tp_shard >= shard.tp)
    throw std::invalid_argument("layer " + std::to_string(index) + ": the experts' ffn " +
                                std::to_string(shape.ffn) + " cannot be split over tp = " +
                                std::to_string(shard.tp) + "; choose a tp that divides ffn");
  if (sequence.shards < 1 || shape.tokens % sequence.shards != 0 || sequence.shard < 0 ||
      sequence.shard >= sequence.shards)
    throw std::invalid_argument(
        "layer " + std::to_string(index) + ": the sequence of " + std::to_string(shape.tokens) +
        " tokens cannot be split over tp = " + std::to_string(sequence.shards) +
        "; choose a tp that divides it");
  const int64_t h = shape.dim;
  const int64_t f = hidden_width();
  experts_.resize(static_cast<size_t>(shape.experts / shard.ep));
  for (Expert& e : experts_) {
    e.w1 = Tensor(h, f, allocator, MemoryCategory::Weights);
    e.b1 = Tensor(1, f, allocator, MemoryCategory::Weights);
    e.w2 = Tensor(f, h, allocator, MemoryCategory::Weights);
    e.b2 = Tensor(1, h, allocator, MemoryCategory::Weights);
    e.w1_grad = Tensor(h, f, allocator, MemoryCategory::Gradients);
    e.b1_grad = Tensor(1, f, allocator, MemoryCategory::Gradients);
    e.w2_grad = Tensor(f, h, allocator, MemoryCategory::Gradients);
    e.b2_grad = Tensor(1, h, allocator, MemoryCategory::Gradients);
  }
}

void MoeLayer::init(uint64_t seed) {
  const uint64_t key = layer_key(seed, RandomStream::MixtureOfExperts, index());
  // PyTorch's nn.Linear bounds: 1 / sqrt(fan in).
  const double in_bound = 1.0 / std::sqrt(static_cast<double>(shape_.dim));
  const double hidden_bound = 1.0 / std::sqrt(static_cast<double>(shape_.ffn));
  init_uniform_block(gate_, combine_key(key, kGateWord), in_bound, gate_.cols());
  // Keyed by the element's place in the whole expert: a tensor-parallel
  // shard's columns of W1 and b1 and rows of W2 are the whole expert's.
  const int64_t first_hidden = shard_.tp_shard * hidden_width();
  for (size_t l = 0; l < experts_.size(); ++l) {
    const int64_t global =
        static_cast<int64_t>(shard_.rank) * local_experts() + static_cast<int64_t>(l);
    Expert& e = experts_[l];
    init_uniform_block(e.w1, combine_key(key, expert_word(global, 0)), in_bound, shape_.ffn, 0,
                       first_hidden);
    init_uniform_block(e.b1, combine_key(key, expert_word(global, 1)), in_bound, shape_.ffn, 0,
                       first_hidden);
    init_uniform_block(e.w2, combine_key(key, expert_word(global, 2)), hidden_bound, e.w2.cols(),
                       first_hidden, 0);
    init_uniform_block(e.b2, combine_key(key, expert_word(global, 3)), hidden_bound, e.b2.cols());
  }
}

void MoeLayer::connect_experts(ExpertConnection connection) { connection_ = std::move(connection); }

void MoeLayer::connect_sequence_parallel(InnerSequenceCollectives collectives) {
  sequence_collectives_ = std::move(collectives);
}

Tensor MoeLayer::gather_slices(const Tensor& local, bool in_forward) {
  const int64_t local_tokens = shape_.tokens / sequence_.shards;
  const SequenceSlice slice{sequence_.shards, sequence_.shard, local.rows(), local_tokens};
  Tensor whole(local.rows() * shape_.tokens, shape_.dim, allocator(), MemoryCategory::Activations);
  auto gather = [this, in_forward](float* data, int64_t count) {
    Tensor values = Tensor::borrow(data, count);
    sequence_collectives_.all_gather(values, in_forward);
  };
  gather_sequence(Tensor::view(local, local.rows() * local_tokens, shape_.dim), slice, whole,
                  gather, allocator());
  whole.reshape(local.rows(), shape_.tokens * shape_.dim);
  return whole;
}

Tensor MoeLayer::own_positions(const Tensor& whole) const {
  const int64_t width = shape_.tokens * shape_.dim / sequence_.shards;
  const int64_t first = width * sequence_.shard;
  Tensor local(whole.rows(), width, allocator(), MemoryCategory::Activations);
  for (int64_t b = 0; b < whole.rows(); ++b)
    std::copy(whole.row(b) + first, whole.row(b) + first + width, local.row(b));
  return local;
}

void MoeLayer::exchange(Tensor& values, bool in_forward) {
  if (shard_.ep == 1) return;
  if (!connection_.all_to_all)
    throw std::logic_error("layer " + std::to_string(index()) +
                           ": expert parallelism without its all-to-all");
  connection_.all_to_all(values, in_forward);
}

Tensor MoeLayer::reorder_slots(const Tensor& from, bool to_expert_major) const {
  const int64_t members = shard_.ep;
  const int64_t capacity = from.rows() / (members * local_experts());
  Tensor to =
      Tensor::uninitialized(from.rows(), from.cols(), allocator(), MemoryCategory::Activations);
  for (int64_t member_major = 0; member_major < members * local_experts(); ++member_major) {
    const int64_t expert_major = expert_major_block(member_major, members, local_experts());
    const float* block = from.row((to_expert_major ? member_major : expert_major) * capacity);
    std::copy(block, block + capacity * from.cols(),
              to.row((to_expert_major ? expert_major : member_major) * capacity));
  }
  return to;
}

double MoeLayer::microbatch_share(int64_t rows) const {
  return connection_.step_tokens > 0 ? static_cast<double>(rows) / connection_.step_tokens : 1.0;
}

Tensor MoeLayer::forward(const Tensor& x, const ForwardInfo& info) {
  std::unique_ptr<LayerState> state;
  return forward_keeping(x, info, state);
}

Tensor MoeLayer::forward_keeping(const Tensor& x, const ForwardInfo& info,
                                 std::unique_ptr<LayerState>& state) {
  if (sequence_.shards == 1) return forward_whole(x, info, state);
  return own_positions(forward_whole(gather_slices(x, true), info, state));
}

Tensor MoeLayer::forward_whole(const Tensor& x, const ForwardInfo& info,
                               std::unique_ptr<LayerState>& state) {
  Tensor y = mix(Tensor::view(x, x.rows() * shape_.tokens, shape_.dim), info, state);
  y.reshape(x.rows(), x.cols());
  y.add(x);  // the residual: a dropped token passes through
  return y;
}

Tensor MoeLayer::mix(const Tensor& tokens, const ForwardInfo& info,
                     std::unique_ptr<LayerState>& state, const AllReduceFunction& tp_sum) {
  const int64_t h = shape_.dim;
  const int64_t rows = tokens.rows();
  auto kept = std::make_unique<Kept>();

  kept->probabilities = make_activation(rows, shape_.experts);
  linear_forward(tokens, gate_, nullptr, kept->probabilities);
  softmax_rows(kept->probabilities.data(), rows, shape_.experts);
  const int64_t capacity =
      expert_capacity(shape_.capacity_factor, rows, shape_.top_k, shape_.experts);
  kept->routing =
      route_tokens(kept->probabilities.data(), rows, shape_.experts, shape_.top_k, capacity);
  const MoeRouting& routing = kept->routing;

  // Dispatch: every kept assignment's token into its slot (empty slots stay 0).
  Tensor dispatch(shape_.experts * capacity, h, allocator(), MemoryCategory::Activations);
  for (size_t a = 0; a < routing.slot.size(); ++a)
    if (routing.slot[a] >= 0) {
      const float* token = tokens.row(static_cast<int64_t>(a) / shape_.top_k);
      std::copy(token, token + h, dispatch.row(routing.slot[a]));
    }
  exchange(dispatch, true);
  kept->expert_input = reorder_slots(dispatch, true);
  dispatch.reset();

  // Each local expert on its ep x capacity rows.
  const int64_t expert_rows = shard_.ep * capacity;
  kept->hidden = Tensor::uninitialized(kept->expert_input.rows(), hidden_width(), allocator(),
                                       MemoryCategory::Activations);
  Tensor activated = Tensor::uninitialized(kept->hidden.rows(), hidden_width(), allocator(),
                                           MemoryCategory::Workspace);
  Tensor output =
      Tensor::uninitialized(kept->expert_input.rows(), h, allocator(), MemoryCategory::Activations);
  for (int64_t l = 0; l < local_experts(); ++l) {
    const Expert& e = experts_[static_cast<size_t>(l)];
    Tensor hidden = rows_of(kept->hidden, l * expert_rows, expert_rows);
    Tensor act = rows_of(activated, l * expert_rows, expert_rows);
    Tensor out = rows_of(output, l * expert_rows, expert_rows);
    linear_forward(rows_of(kept->expert_input, l * expert_rows, expert_rows), e.w1, &e.b1, hidden);
    gelu_forward(hidden.data(), act.data(), act.size());
    // Row-parallel W2: its bias joins once, on shard 0, before the sum.
    linear_forward(act, e.w2, shard_.tp_shard == 0 ? &e.b2 : nullptr, out);
  }
  tp_sum(output.data(), output.size());  // every shard then holds the whole outputs
  kept->returned = reorder_slots(output, false);
  output.reset();
  exchange(kept->returned, true);

  // Combine: each kept assignment's weighted expert output.
  Tensor y(rows, h, allocator(), MemoryCategory::Activations);
  for (size_t a = 0; a < routing.slot.size(); ++a) {
    if (routing.slot[a] < 0) continue;
    const float w = routing.weight[a];
    const float* expert_out = kept->returned.row(routing.slot[a]);
    float* out = y.row(static_cast<int64_t>(a) / shape_.top_k);
    for (int64_t c = 0; c < h; ++c) out[c] += w * expert_out[c];
  }
  if (info.training && connection_.report)
    connection_.report(info, routing, aux_loss_weight_ * routing.aux_loss * microbatch_share(rows));
  state = std::move(kept);
  return y;
}

Tensor MoeLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) {
  std::unique_ptr<LayerState> state;
  forward_keeping(x, info, state);
  return backward_input_with(x, dy, info, state.get());
}

Tensor MoeLayer::backward_input_with(const Tensor& x, const Tensor& dy, const ForwardInfo& info,
                                     LayerState* state) {
  (void)info;
  if (sequence_.shards == 1) return backward_whole(x, dy, state);
  // In this order on every shard (the schedule lists the two gathers alike).
  const Tensor whole_x = gather_slices(x, false);
  const Tensor whole_dy = gather_slices(dy, false);
  return own_positions(backward_whole(whole_x, whole_dy, state));
}

Tensor MoeLayer::backward_whole(const Tensor& x, const Tensor& dy, LayerState* state) {
  const int64_t rows = x.rows() * shape_.tokens;
  Tensor dx =
      mix_backward(Tensor::view(x, rows, shape_.dim), Tensor::view(dy, rows, shape_.dim), state);
  dx.reshape(dy.rows(), dy.cols());
  dx.add(dy);  // the residual's
  return dx;
}

Tensor MoeLayer::mix_backward(const Tensor& tokens, const Tensor& dy_tokens, LayerState* state,
                              const AllReduceFunction& tp_sum) {
  Kept& kept = *static_cast<Kept*>(state);
  const MoeRouting& routing = kept.routing;
  const int64_t h = shape_.dim;
  const int64_t rows = tokens.rows();

  // The combine's backward: each kept slot's output gradient, and each
  // assignment's weight gradient (dy . expert output).
  Tensor returned_grad(kept.returned.rows(), h, allocator(), MemoryCategory::Activations);
  std::vector<float> weight_grad(routing.slot.size(), 0.0f);
  for (size_t a = 0; a < routing.slot.size(); ++a) {
    if (routing.slot[a] < 0) continue;
    const float* g = dy_tokens.row(static_cast<int64_t>(a) / shape_.top_k);
    const float* expert_out = kept.returned.row(routing.slot[a]);
    float* slot_grad = returned_grad.row(routing.slot[a]);
    double dot = 0;
    for (int64_t c = 0; c < h; ++c) {
      slot_grad[c] = routing.weight[a] * g[c];
      dot += static_cast<double>(g[c]) * expert_out[c];
    }
    weight_grad[a] = static_cast<float>(dot);
  }
  exchange(returned_grad, false);
  const Tensor output_grad = reorder_slots(returned_grad, true);
  returned_grad.reset();

  // The experts' backward on their rows.
  const int64_t expert_rows = output_grad.rows() / local_experts();
  Tensor input_grad =
      Tensor::uninitialized(output_grad.rows(), h, allocator(), MemoryCategory::Activations);
  Tensor activated =
      Tensor::uninitialized(expert_rows, hidden_width(), allocator(), MemoryCategory::Workspace);
  Tensor activated_grad =
      Tensor::uninitialized(expert_rows, hidden_width(), allocator(), MemoryCategory::Workspace);
  Tensor hidden_grad =
      Tensor::uninitialized(expert_rows, hidden_width(), allocator(), MemoryCategory::Workspace);
  for (int64_t l = 0; l < local_experts(); ++l) {
    Expert& e = experts_[static_cast<size_t>(l)];
    const Tensor hidden = rows_of(kept.hidden, l * expert_rows, expert_rows);
    const Tensor input = rows_of(kept.expert_input, l * expert_rows, expert_rows);
    const Tensor out_grad = rows_of(output_grad, l * expert_rows, expert_rows);
    Tensor in_grad = rows_of(input_grad, l * expert_rows, expert_rows);
    gelu_forward(hidden.data(), activated.data(), activated.size());
    linear_backward_weight(activated, out_grad, e.w2_grad, &e.b2_grad);
    linear_backward_input(out_grad, e.w2, activated_grad);
    gelu_backward(hidden.data(), activated_grad.data(), hidden_grad.data(), hidden_grad.size());
    linear_backward_weight(input, hidden_grad, e.w1_grad, &e.b1_grad);
    linear_backward_input(hidden_grad, e.w1, in_grad);
  }
  tp_sum(input_grad.data(), input_grad.size());  // column-parallel W1's partial input gradients
  Tensor dispatch_grad = reorder_slots(input_grad, false);
  input_grad.reset();
  exchange(dispatch_grad, false);

  // d tokens: each kept slot's input gradient, and the gate's.
  Tensor dx(rows, h, allocator(), MemoryCategory::Activations);
  for (size_t a = 0; a < routing.slot.size(); ++a) {
    if (routing.slot[a] < 0) continue;
    const float* slot_grad = dispatch_grad.row(routing.slot[a]);
    float* g = dx.row(static_cast<int64_t>(a) / shape_.top_k);
    for (int64_t c = 0; c < h; ++c) g[c] += slot_grad[c];
  }
  Tensor logits_grad(rows, shape_.experts, allocator(), MemoryCategory::Workspace);
  // With partial outputs the shards' gate gradients are summed: the aux
  // loss's part joins once.
  const bool adds_aux = !shard_.partial_outputs() || shard_.tp_shard == 0;
  routing_backward(routing, kept.probabilities.data(), weight_grad.data(),
                   adds_aux ? aux_loss_weight_ * microbatch_share(rows) : 0.0, logits_grad.data());
  softmax_rows_backward(kept.probabilities.data(), logits_grad.data(), rows, shape_.experts);
  linear_backward_weight(tokens, logits_grad, gate_grad_, nullptr);
  Tensor gate_input_grad = Tensor::uninitialized(rows, h, allocator(), MemoryCategory::Workspace);
  linear_backward_input(logits_grad, gate_, gate_input_grad);
  for (int64_t i = 0; i < dx.size(); ++i) dx.data()[i] += gate_input_grad.data()[i];
  return dx;
}

void MoeLayer::backward_weight_with(const Tensor& x, const Tensor& dy, LayerState* state) {
  // backward_input_with added every weight gradient already.
  (void)x;
  (void)dy;
  (void)state;
}

std::vector<Tensor*> MoeLayer::params() { return moe_parameters(gate_, experts_); }

std::vector<Tensor*> MoeLayer::grads() { return moe_gradients(gate_grad_, experts_); }

std::vector<Tensor*> MoeLayer::sequence_partial_grads() {
  if (!shard_.partial_outputs()) return {};
  return {&gate_grad_};
}

std::vector<Tensor*> MoeLayer::expert_grads() { return moe_expert_gradients(experts_); }

}  // namespace pipelab
