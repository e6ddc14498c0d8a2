// Mixture-of-Experts kernels (moe_math.h has the formulas; core/nn/moe_layer.h
// the definition) around the experts' GEMMs: x, y, dy, dx are [tokens, dim];
// the dispatch buffer and the experts' outputs [slots, dim] (slots = E x
// capacity, expert-major); slot and weight per assignment (tokens x top_k),
// slot_assignment per slot row (moe_math::fill_slot_assignments). Each output
// element has one thread that adds its terms in the CPU's order: no atomics,
// deterministic.
//   moe_dispatch        expert_in = each kept assignment's token in its slot, 0 elsewhere
//   moe_combine         y = x + the weighted expert outputs of each token's kept choices
//   moe_slot_gradient   expert_out_grad = weight x dy of the slot's token, 0 if empty
//   moe_weight_gradient weight_grad[a] = dy[token] . expert_out[slot] (one thread each)
//   moe_token_gradient  dx = dy + each kept choice's dispatch gradient + gate_input_grad
// moe_combine's x and moe_token_gradient's dy are the residual's: null for
// the experts' part alone (GpuMoe::mix, mix_backward).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pipelab::gpu::kernels {

void moe_dispatch(const float* x, const int64_t* slot_assignment, int64_t slots, int64_t top_k,
                  int64_t dim, float* expert_in, cudaStream_t stream);
void moe_combine(const float* x, const float* expert_out, const int64_t* slot, const float* weight,
                 int64_t tokens, int64_t top_k, int64_t dim, float* y, cudaStream_t stream);
void moe_slot_gradient(const float* dy, const int64_t* slot_assignment, const float* weight,
                       int64_t slots, int64_t top_k, int64_t dim, float* expert_out_grad,
                       cudaStream_t stream);
void moe_weight_gradient(const float* dy, const float* expert_out, const int64_t* slot,
                         int64_t assignments, int64_t top_k, int64_t dim, float* weight_grad,
                         cudaStream_t stream);
void moe_token_gradient(const float* dy, const float* dispatch_grad, const float* gate_input_grad,
                        const int64_t* slot, int64_t tokens, int64_t top_k, int64_t dim, float* dx,
                        cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
