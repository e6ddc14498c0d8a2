#include "gpu/kernels/moe.h"

#include "gpu/kernels/launch.cuh"
#include "gpu/kernels/moe_math.h"

namespace pipelab::gpu::kernels {
namespace {

__global__ void dispatch_kernel(const float* x, const int64_t* slot_assignment, int64_t slots,
                                int64_t top_k, int64_t dim, float* expert_in) {
  PIPELAB_GRID_STRIDE_LOOP(i, slots * dim) {
    expert_in[i] = moe_math::dispatch_value(x, slot_assignment, top_k, dim, i / dim, i % dim);
  }
}

__global__ void combine_kernel(const float* x, const float* expert_out, const int64_t* slot,
                               const float* weight, int64_t tokens, int64_t top_k, int64_t dim,
                               float* y) {
  PIPELAB_GRID_STRIDE_LOOP(i, tokens * dim) {
    y[i] = moe_math::combine_value(x, expert_out, slot, weight, top_k, dim, i / dim, i % dim);
  }
}

__global__ void slot_gradient_kernel(const float* dy, const int64_t* slot_assignment,
                                     const float* weight, int64_t slots, int64_t top_k,
                                     int64_t dim, float* expert_out_grad) {
  PIPELAB_GRID_STRIDE_LOOP(i, slots * dim) {
    expert_out_grad[i] =
        moe_math::slot_gradient(dy, slot_assignment, weight, top_k, dim, i / dim, i % dim);
  }
}

__global__ void weight_gradient_kernel(const float* dy, const float* expert_out,
                                       const int64_t* slot, int64_t assignments, int64_t top_k,
                                       int64_t dim, float* weight_grad) {
  PIPELAB_GRID_STRIDE_LOOP(a, assignments) {
    weight_grad[a] = moe_math::weight_gradient(dy, expert_out, slot, top_k, dim, a);
  }
}

__global__ void token_gradient_kernel(const float* dy, const float* dispatch_grad,
                                      const float* gate_input_grad, const int64_t* slot,
                                      int64_t tokens, int64_t top_k, int64_t dim, float* dx) {
  PIPELAB_GRID_STRIDE_LOOP(i, tokens * dim) {
    dx[i] = moe_math::token_gradient(dy, dispatch_grad, gate_input_grad, slot, top_k, dim, i / dim,
                                     i % dim);
  }
}

}  // namespace

void moe_dispatch(const float* x, const int64_t* slot_assignment, int64_t slots, int64_t top_k,
                  int64_t dim, float* expert_in, cudaStream_t stream) {
  if (slots * dim == 0) return;
  dispatch_kernel<<<grid_for(slots * dim), kBlockThreads, 0, stream>>>(x, slot_assignment, slots,
                                                                       top_k, dim, expert_in);
  PIPELAB_CHECK_LAUNCH();
}

void moe_combine(const float* x, const float* expert_out, const int64_t* slot, const float* weight,
                 int64_t tokens, int64_t top_k, int64_t dim, float* y, cudaStream_t stream) {
  if (tokens * dim == 0) return;
  combine_kernel<<<grid_for(tokens * dim), kBlockThreads, 0, stream>>>(x, expert_out, slot, weight,
                                                                       tokens, top_k, dim, y);
  PIPELAB_CHECK_LAUNCH();
}

void moe_slot_gradient(const float* dy, const int64_t* slot_assignment, const float* weight,
                       int64_t slots, int64_t top_k, int64_t dim, float* expert_out_grad,
                       cudaStream_t stream) {
  if (slots * dim == 0) return;
  slot_gradient_kernel<<<grid_for(slots * dim), kBlockThreads, 0, stream>>>(
      dy, slot_assignment, weight, slots, top_k, dim, expert_out_grad);
  PIPELAB_CHECK_LAUNCH();
}

void moe_weight_gradient(const float* dy, const float* expert_out, const int64_t* slot,
                         int64_t assignments, int64_t top_k, int64_t dim, float* weight_grad,
                         cudaStream_t stream) {
  if (assignments == 0) return;
  weight_gradient_kernel<<<grid_for(assignments), kBlockThreads, 0, stream>>>(
      dy, expert_out, slot, assignments, top_k, dim, weight_grad);
  PIPELAB_CHECK_LAUNCH();
}

void moe_token_gradient(const float* dy, const float* dispatch_grad, const float* gate_input_grad,
                        const int64_t* slot, int64_t tokens, int64_t top_k, int64_t dim, float* dx,
                        cudaStream_t stream) {
  if (tokens * dim == 0) return;
  token_gradient_kernel<<<grid_for(tokens * dim), kBlockThreads, 0, stream>>>(
      dy, dispatch_grad, gate_input_grad, slot, tokens, top_k, dim, dx);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
