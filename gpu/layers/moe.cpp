#include "gpu/layers/moe.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

#include "core/nn/moe_layer.h"
#include "core/nn/moe_routing.h"
#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"
#include "gpu/kernels/activations.h"
#include "gpu/kernels/moe.h"
#include "gpu/kernels/moe_math.h"
#include "gpu/layers/cublas_gemm.h"
#include "gpu/layers/kept_gemm_input.h"
#include "gpu/layers/sequence_split.h"

namespace pipelab::gpu {

// What a micro-batch's forward keeps for its backward: the routing and the
// gate probabilities on the host (the gate's backward runs there), the slot
// tables and combine weights on the device, and the local experts' inputs and
// hidden pre-activations (expert-major rows) and the experts' outputs for
// this device's slots (all Activations, as the CPU layer keeps).
struct GpuMoe::Kept : MovableLayerState<DeviceTensor> {
  MoeRouting routing;
  std::vector<float> probabilities;  // [rows, E], host
  DeviceBuffer slot;                 // int64 per assignment
  DeviceBuffer slot_assignment;      // int64 per slot row
  DeviceTensor weight;               // [1, assignments]
  KeptGemmInput expert_input;        // [L x ep x capacity, dim], expert-major (kept_bf16.h)
  DeviceTensor hidden;               // [L x ep x capacity, ffn], before GELU
  DeviceTensor expert_output;        // [E x capacity, dim], this device's slots

  int64_t bytes() const override {
    return slot.bytes() + slot_assignment.bytes() + weight.bytes() + expert_input.bytes() +
           hidden.bytes() + expert_output.bytes();
  }
  std::vector<DeviceTensor*> tensors() override {
    return {&weight, &expert_input.stored(), &hidden, &expert_output};
  }
};

namespace {

DeviceBuffer upload_indices(const std::vector<int64_t>& values, CachingAllocator& allocator) {
  DeviceBuffer buffer(static_cast<int64_t>(values.size() * sizeof(int64_t)), &allocator,
                      MemoryCategory::Activations);
  if (values.empty()) return buffer;
  DeviceGuard guard(allocator.device());
  // From pageable memory: the call returns once `values` has been staged.
  PIPELAB_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), values.data(),
                                     static_cast<size_t>(buffer.bytes()), cudaMemcpyHostToDevice,
                                     allocator.stream()));
  return buffer;
}

}  // namespace

GpuMoe::GpuMoe(int index, const MoeShape& shape, double aux_loss_weight, ExpertShard shard,
               uint64_t seed, DeviceContext& context, MoeSequenceSlice sequence)
    : GpuLayer(LayerType::Moe, index, shape.tokens * shape.dim / std::max(sequence.shards, 1),
               shape.tokens * shape.dim / std::max(sequence.shards, 1), context),
      shape_(shape),
      aux_loss_weight_(aux_loss_weight),
      shard_(shard),
      sequence_(sequence),
      gate_(shape.dim, shape.experts, &context.allocator(), MemoryCategory::Weights),
      gate_grad_(shape.dim, shape.experts, &context.allocator(), MemoryCategory::Gradients) {
  // The CPU layer's initial values (one place for the initialisation rule and
  // the checks that ep divides the experts and the shards the sequence).
  MoeLayer host(index, shape, aux_loss_weight, shard, nullptr, sequence);
  host.init(seed);
  const int64_t h = shape.dim;
  const int64_t f = hidden_width();
  experts_.resize(static_cast<size_t>(host.local_experts()));
  for (Expert& e : experts_) {
    e.w1 = tensor(h, f, MemoryCategory::Weights);
    e.b1 = tensor(1, f, MemoryCategory::Weights);
    e.w2 = tensor(f, h, MemoryCategory::Weights);
    e.b2 = tensor(1, h, MemoryCategory::Weights);
    e.w1_grad = tensor(h, f, MemoryCategory::Gradients);
    e.b1_grad = tensor(1, f, MemoryCategory::Gradients);
    e.w2_grad = tensor(f, h, MemoryCategory::Gradients);
    e.b2_grad = tensor(1, h, MemoryCategory::Gradients);
  }
  const std::vector<Tensor*> values = host.params();
  const std::vector<DeviceTensor*> targets = params();
  assert(values.size() == targets.size());
  for (size_t i = 0; i < values.size(); ++i) targets[i]->copy_from_host(*values[i]);
}

DeviceTensor GpuMoe::tensor(int64_t rows, int64_t cols, MemoryCategory category) const {
  return DeviceTensor(rows, cols, &context().allocator(), category);
}

void GpuMoe::connect_experts(ExpertConnection connection) { connection_ = std::move(connection); }

void GpuMoe::exchange(DeviceTensor& values, bool in_forward) {
  if (shard_.ep == 1) return;
  if (!connection_.all_to_all)
    throw std::logic_error("layer " + std::to_string(index()) +
                           ": expert parallelism without its all-to-all");
  connection_.all_to_all(values, in_forward);
}

DeviceTensor GpuMoe::reorder_slots(DeviceTensor from, int64_t capacity,
                                   bool to_expert_major) const {
  if (shard_.ep == 1) return from;
  DeviceTensor to = DeviceTensor::uninitialized(from.rows(), from.cols(), &context().allocator(),
                                                from.category());
  const int64_t block = capacity * from.cols();  // values per block of slot rows
  for (int64_t member_major = 0; member_major < shard_.ep * local_experts(); ++member_major) {
    const int64_t expert_major = expert_major_block(member_major, shard_.ep, local_experts());
    const int64_t source = to_expert_major ? member_major : expert_major;
    const int64_t target = to_expert_major ? expert_major : member_major;
    PIPELAB_CUDA_CHECK(cudaMemcpyAsync(to.data() + target * block, from.data() + source * block,
                                       static_cast<size_t>(block) * sizeof(float),
                                       cudaMemcpyDeviceToDevice, context().stream()));
  }
  return to;
}

double GpuMoe::microbatch_share(int64_t rows) const {
  return connection_.step_tokens > 0 ? static_cast<double>(rows) / connection_.step_tokens : 1.0;
}

DeviceTensor GpuMoe::forward(const DeviceTensor& x, const ForwardInfo& info) {
  std::unique_ptr<LayerState> state;
  return forward_keeping(x, info, state);
}

DeviceTensor GpuMoe::gather_slices(const DeviceTensor& local, bool in_forward) {
  const int64_t local_tokens = shape_.tokens / sequence_.shards;
  const SequenceSlice slice{sequence_.shards, sequence_.shard, local.rows(), local_tokens};
  DeviceTensor whole =
      DeviceTensor::uninitialized(local.rows(), shape_.tokens * shape_.dim, &context().allocator(),
                                  MemoryCategory::Activations);
  const auto& all_gather = sequence_collectives_.all_gather;
  gather_sequence(
      local.data(), slice, shape_.dim, whole.data(),
      [&all_gather, in_forward](DeviceTensor& values) { all_gather(values, in_forward); },
      context());
  return whole;
}

DeviceTensor GpuMoe::own_positions(const DeviceTensor& whole) const {
  // Each sample's row holds its positions in order: this shard's are one
  // contiguous run of `width` values per row, so one strided copy.
  const int64_t width = whole.cols() / sequence_.shards;
  DeviceTensor local = make_activation(whole.rows(), width);
  const size_t row_bytes = static_cast<size_t>(width) * sizeof(float);
  PIPELAB_CUDA_CHECK(cudaMemcpy2DAsync(
      local.data(), row_bytes, whole.data() + width * sequence_.shard,
      static_cast<size_t>(whole.cols()) * sizeof(float), row_bytes,
      static_cast<size_t>(whole.rows()), cudaMemcpyDeviceToDevice, context().stream()));
  return local;
}

DeviceTensor GpuMoe::forward_keeping(const DeviceTensor& x, const ForwardInfo& info,
                                     std::unique_ptr<LayerState>& state) {
  assert(x.cols() == in_features());
  if (sequence_.shards == 1) return forward_whole(x, info, state);
  return own_positions(forward_whole(gather_slices(x, true), info, state));
}

DeviceTensor GpuMoe::forward_whole(const DeviceTensor& x, const ForwardInfo& info,
                                   std::unique_ptr<LayerState>& state) {
  DeviceTensor y = mix(x.data(), x.rows() * shape_.tokens, x.data(), info, state);
  y.reshape(x.rows(), x.cols());
  return y;
}

DeviceTensor GpuMoe::mix(const float* tokens, int64_t rows, const float* residual,
                         const ForwardInfo& info, std::unique_ptr<LayerState>& state,
                         const TensorParallelSum& tp_sum) {
  const int64_t h = shape_.dim;
  const int64_t f = hidden_width();
  const int64_t experts = shape_.experts;
  const cublasHandle_t cublas = context().cublas();
  const cudaStream_t stream = context().stream();
  auto kept = std::make_unique<Kept>();

  // The gate on the device; softmax and routing on the host (see the header).
  DeviceTensor logits = DeviceTensor::uninitialized(rows, experts, &context().allocator());
  linear_forward(cublas, tokens, rows, gate_, nullptr, logits.data(), stream);
  kept->probabilities = logits.to_vector();
  logits.reset();
  softmax_rows(kept->probabilities.data(), rows, experts);
  const int64_t capacity = expert_capacity(shape_.capacity_factor, rows, shape_.top_k, experts);
  kept->routing = route_tokens(kept->probabilities.data(), rows, experts, shape_.top_k, capacity);
  const MoeRouting& routing = kept->routing;
  const int64_t assignments = static_cast<int64_t>(routing.slot.size());
  const int64_t slots = experts * capacity;
  std::vector<int64_t> slot_assignment(static_cast<size_t>(slots));
  moe_math::fill_slot_assignments(routing.slot.data(), assignments, slot_assignment.data(), slots);
  kept->slot = upload_indices(routing.slot, context().allocator());
  kept->slot_assignment = upload_indices(slot_assignment, context().allocator());
  kept->weight = DeviceTensor::from_values(1, assignments, routing.weight, &context().allocator(),
                                           MemoryCategory::Activations);

  // Dispatch (to every member's experts: the all-to-all hands each member the
  // rows for its own), then each local expert's MLP on its ep x capacity rows
  // (as many slot rows in all as this device dispatched), then the outputs go
  // back to the members whose slots they fill.
  DeviceTensor dispatch =
      DeviceTensor::uninitialized(slots, h, &context().allocator(), MemoryCategory::Activations);
  kernels::moe_dispatch(tokens, kept->slot_assignment.as<int64_t>(), slots, shape_.top_k, h,
                        dispatch.data(), stream);
  exchange(dispatch, true);
  // Kept only for W1's GEMMs: in bf16 under bf16-mixed (kept_gemm_input.h).
  kept->expert_input = KeptGemmInput(reorder_slots(std::move(dispatch), capacity, true),
                                     context().keeps_bf16_gemm_inputs());
  kept->hidden =
      DeviceTensor::uninitialized(slots, f, &context().allocator(), MemoryCategory::Activations);
  DeviceTensor activated = DeviceTensor::uninitialized(slots, f, &context().allocator());
  DeviceTensor output =
      DeviceTensor::uninitialized(slots, h, &context().allocator(), MemoryCategory::Activations);
  const int64_t expert_rows = shard_.ep * capacity;
  for (int64_t l = 0; l < local_experts(); ++l) {
    const Expert& expert = experts_[static_cast<size_t>(l)];
    const int64_t first = l * expert_rows;
    linear_forward(cublas, kept->expert_input, first, expert_rows, expert.w1, &expert.b1,
                   kept->hidden.data() + first * f, stream);
  }
  kernels::activation_forward(Activation::Gelu, kept->hidden.data(), activated.data(),
                              activated.size(), stream);
  for (int64_t l = 0; l < local_experts(); ++l) {
    const Expert& expert = experts_[static_cast<size_t>(l)];
    const int64_t first = l * expert_rows;
    // Row-parallel W2: its bias joins once, on shard 0, before the sum.
    linear_forward(cublas, activated.data() + first * f, expert_rows, expert.w2,
                   shard_.tp_shard == 0 ? &expert.b2 : nullptr, output.data() + first * h, stream);
  }
  activated.reset();
  if (tp_sum) tp_sum(output);  // every shard then holds the whole outputs
  kept->expert_output = reorder_slots(std::move(output), capacity, false);
  exchange(kept->expert_output, true);

  // Combine: each kept assignment's weighted expert output, then the residual.
  DeviceTensor y = make_activation(rows, h);
  kernels::moe_combine(residual, kept->expert_output.data(), kept->slot.as<int64_t>(),
                       kept->weight.data(), rows, shape_.top_k, h, y.data(), stream);
  if (info.training && connection_.report)
    connection_.report(info, routing, aux_loss_weight_ * routing.aux_loss * microbatch_share(rows));
  state = std::move(kept);
  return y;
}

DeviceTensor GpuMoe::backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                    const ForwardInfo& info) {
  std::unique_ptr<LayerState> state;
  forward_keeping(x, info, state);
  return backward_input_with(x, dy, info, state.get());
}

DeviceTensor GpuMoe::backward_input_with(const DeviceTensor& x, const DeviceTensor& dy,
                                         const ForwardInfo& info, LayerState* state) {
  (void)info;
  assert(x.same_shape(dy));
  if (sequence_.shards == 1) return backward_whole(x, dy, state);
  // In this order on every shard (the schedule lists the two gathers alike).
  const DeviceTensor whole_x = gather_slices(x, false);
  const DeviceTensor whole_dy = gather_slices(dy, false);
  return own_positions(backward_whole(whole_x, whole_dy, state));
}

DeviceTensor GpuMoe::backward_whole(const DeviceTensor& x, const DeviceTensor& dy,
                                    LayerState* state) {
  DeviceTensor dx = mix_backward(x.data(), dy.data(), x.rows() * shape_.tokens, dy.data(), state);
  dx.reshape(dy.rows(), dy.cols());
  return dx;
}

DeviceTensor GpuMoe::mix_backward(const float* tokens, const float* mix_grad, int64_t rows,
                                  const float* residual_grad, LayerState* state,
                                  const TensorParallelSum& tp_sum) {
  Kept& kept = *static_cast<Kept*>(state);
  const MoeRouting& routing = kept.routing;
  const int64_t h = shape_.dim;
  const int64_t f = hidden_width();
  const int64_t experts = shape_.experts;
  const int64_t capacity = routing.capacity;
  const int64_t slots = experts * capacity;
  const int64_t expert_rows = shard_.ep * capacity;  // each local expert's
  const int64_t assignments = static_cast<int64_t>(routing.slot.size());
  const cublasHandle_t cublas = context().cublas();
  const cudaStream_t stream = context().stream();
  const int64_t* slot = kept.slot.as<int64_t>();

  // The combine's backward: each slot's output gradient, each assignment's
  // weight gradient.
  DeviceTensor output_grad = DeviceTensor::uninitialized(slots, h, &context().allocator());
  kernels::moe_slot_gradient(mix_grad, kept.slot_assignment.as<int64_t>(), kept.weight.data(),
                             slots, shape_.top_k, h, output_grad.data(), stream);
  DeviceTensor weight_grad = DeviceTensor::uninitialized(1, assignments, &context().allocator());
  kernels::moe_weight_gradient(mix_grad, kept.expert_output.data(), slot, assignments,
                               shape_.top_k, h, weight_grad.data(), stream);
  // The slots' output gradients go to the members holding their experts.
  exchange(output_grad, false);
  output_grad = reorder_slots(std::move(output_grad), capacity, true);

  // The experts' backward on their rows (they add their weight gradients here:
  // backward_weight has nothing left to do, as on the CPU).
  DeviceTensor activated = DeviceTensor::uninitialized(slots, f, &context().allocator());
  kernels::activation_forward(Activation::Gelu, kept.hidden.data(), activated.data(),
                              activated.size(), stream);
  DeviceTensor activated_grad = DeviceTensor::uninitialized(slots, f, &context().allocator());
  DeviceTensor hidden_grad = DeviceTensor::uninitialized(slots, f, &context().allocator());
  DeviceTensor input_grad = DeviceTensor::uninitialized(slots, h, &context().allocator());
  for (int64_t l = 0; l < local_experts(); ++l) {
    Expert& expert = experts_[static_cast<size_t>(l)];
    const int64_t first = l * expert_rows;
    linear_backward_weight(cublas, activated.data() + first * f, output_grad.data() + first * h,
                           expert_rows, expert.w2_grad, &expert.b2_grad);
    linear_backward_input(cublas, output_grad.data() + first * h, expert_rows, expert.w2,
                          activated_grad.data() + first * f);
  }
  kernels::activation_backward(Activation::Gelu, kept.hidden.data(), activated_grad.data(),
                               hidden_grad.data(), hidden_grad.size(), stream);
  for (int64_t l = 0; l < local_experts(); ++l) {
    Expert& expert = experts_[static_cast<size_t>(l)];
    const int64_t first = l * expert_rows;
    linear_backward_weight(cublas, kept.expert_input, first, hidden_grad.data() + first * f,
                           expert_rows, expert.w1_grad, &expert.b1_grad);
    linear_backward_input(cublas, hidden_grad.data() + first * f, expert_rows, expert.w1,
                          input_grad.data() + first * h);
  }
  activated.reset();
  activated_grad.reset();
  hidden_grad.reset();
  if (tp_sum) tp_sum(input_grad);  // column-parallel W1's partial input gradients
  // The slots' input gradients go back to the members that dispatched them.
  input_grad = reorder_slots(std::move(input_grad), capacity, false);
  exchange(input_grad, false);

  // The gate's logits gradient on the host, by core's routing and softmax
  // backward (the combine weights' gradient and the auxiliary loss's).
  const std::vector<float> host_weight_grad = weight_grad.to_vector();
  std::vector<float> logits_grad(static_cast<size_t>(rows * experts));
  // With partial outputs the shards' gate gradients are summed: the aux
  // loss's part joins once (moe_layer.h).
  const bool adds_aux = !shard_.partial_outputs() || shard_.tp_shard == 0;
  routing_backward(routing, kept.probabilities.data(), host_weight_grad.data(),
                   adds_aux ? aux_loss_weight_ * microbatch_share(rows) : 0.0, logits_grad.data());
  softmax_rows_backward(kept.probabilities.data(), logits_grad.data(), rows, experts);
  const DeviceTensor device_logits_grad =
      DeviceTensor::from_values(rows, experts, logits_grad, &context().allocator());
  linear_backward_weight(cublas, tokens, device_logits_grad.data(), rows, gate_grad_, nullptr);
  DeviceTensor gate_input_grad = DeviceTensor::uninitialized(rows, h, &context().allocator());
  linear_backward_input(cublas, device_logits_grad.data(), rows, gate_, gate_input_grad.data());

  // dx: each kept slot's input gradient and the gate's, then the residual's.
  DeviceTensor dx = make_activation(rows, h);
  kernels::moe_token_gradient(residual_grad, input_grad.data(), gate_input_grad.data(), slot, rows,
                              shape_.top_k, h, dx.data(), stream);
  return dx;
}

void GpuMoe::backward_weight_with(const DeviceTensor& x, const DeviceTensor& dy,
                                  LayerState* state) {
  // backward_input_with added every weight gradient already.
  (void)x;
  (void)dy;
  (void)state;
}

std::vector<DeviceTensor*> GpuMoe::params() { return moe_parameters(gate_, experts_); }

std::vector<DeviceTensor*> GpuMoe::grads() { return moe_gradients(gate_grad_, experts_); }

std::vector<DeviceTensor*> GpuMoe::gemm_weights() {
  std::vector<DeviceTensor*> values;
  for (Expert& e : experts_) values.insert(values.end(), {&e.w1, &e.w2});
  return values;
}

std::vector<DeviceTensor*> GpuMoe::sequence_partial_grads() {
  if (!shard_.partial_outputs()) return {};
  return {&gate_grad_};
}

std::vector<DeviceTensor*> GpuMoe::expert_grads() { return moe_expert_gradients(experts_); }

}  // namespace pipelab::gpu
