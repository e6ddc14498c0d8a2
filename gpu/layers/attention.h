// Multi-head self-attention's core on the GPU (core/nn/attention.h has the
// definition, the fused head-grouped QKV layout and the shapes), with cuBLAS
// strided-batched GEMMs over the heads of each sequence and the fused scaled
// masked softmax (kernels/attention_softmax.h):
//   S = Q K^T,  P = softmax(S / sqrt(head_dim) + mask),  O = dropout(P) V
// A head's q, k and v are strided views of the QKV rows (row length
// qkv_width, heads 3 head_dim apart), so no copies; one batched call per
// sequence covers its heads (under grouped-query attention one per place in
// a query group, each over the key/value heads). Under bf16-mixed
// (DeviceContext::mixed_bf16) the four products' inputs (QKV, P, dO, dS) are rounded to bf16 once
// per call and the GEMMs accumulate and write float32; the softmax and its gradient stay float32.
//
// The QKV rows come as a DeviceTensor (rounded once per call under
// bf16-mixed) or as what a layer keeps of them (KeptGemmInput: in bf16 it is
// read as kept, with no rounding; the results are the same bits).
//
// Context parallelism (shape.queries > 0; core/nn/attention.h's
// context-parallel form): q comes from the rank's own QKV rows, k and v
// from every rank's, gathered and packed (ContextKeys); P is [batch * heads
// * queries, seq], masked and dropped by the queries' global positions; the
// backward writes dq into the rank's rows and dk and dv, for every position,
// into the packed key gradients that the caller sends home. The fused
// kernels take whole sequences, so the unfused path runs.
//
// `probabilities` (when not null) keeps P for the backward, [batch * heads *
// seq, seq]. Without it (selective recompute) forward computes P in a
// Workspace buffer that dies with the call, and backward recomputes it the
// same way, so nothing of P's size lives between the two.
#pragma once

#include "core/nn/attention.h"
#include "gpu/layers/device_context.h"
#include "gpu/kernels/block_dropout_math.h"
#include "gpu/kernels/flash_attention_math.h"
#include "gpu/layers/kept_gemm_input.h"
#include "gpu/memory/device_tensor.h"

namespace pipelab::gpu {

// Fused attention (kernels/flash_attention.h): when the caller keeps no
// probabilities (selective recompute), the fused kernels run instead, keeping
// nothing of P's size at any time: the forward writes the output and each
// row's log-sum-exp (lse); the backward reads them back from the caller
// (FusedKept) or, where it kept none, runs the forward again for them.
// Which kernels may run:
//   TensorCores (the default): the tensor-core kernels, under bf16-mixed, for
//     heads 16 to 128 wide; on an H200 at GPT-2's shapes they beat the unfused
//     path, P kept or recomputed (docs/gpu-runs.md);
//   All: also the float32 kernels (heads 8 to 64), slower than the unfused path;
//   Off: never.
// PIPELAB_FUSED_ATTENTION=0 in the environment turns it off, =1 to All (a test
// or benchmark may set it).
enum class FusedAttention { Off, TensorCores, All };
FusedAttention fused_attention_mode();
void set_fused_attention_mode(FusedAttention mode);
bool uses_fused_attention(const AttentionShape& shape, bool keeps_probabilities,
                          bool bf16_inputs = false);
// The fused kernels' view of `shape` (its score scale as the unfused path's).
flash_math::FlashLayout flash_layout(const AttentionShape& shape);

// What a caller kept of a fused forward, so that its backward runs no second
// forward: each row's lse ([probability_rows, 1]) and the forward's output
// (float32, or rounded to bf16 as the caller keeps it; D_i = dO . O reads it).
struct FusedKept {
  const DeviceTensor* lse = nullptr;
  GemmInput out;
};

// Context parallelism's keys: every rank's k and v of the sequence
// ([key_rows, key_width], packed), the queries' global positions on the
// device (shape.query_positions holds them on the host), and, for the
// backward, where dk and dv go ([key_rows, key_width], overwritten).
struct ContextKeys {
  const DeviceTensor* keys = nullptr;
  const int64_t* positions = nullptr;
  DeviceTensor* key_grads = nullptr;
};

// `dropout` is null or inactive (p = 0) for no dropout on the probabilities.
// Where the fused kernels run, `lse` (when not null, [probability_rows, 1])
// receives each row's log-sum-exp for the backward; elsewhere it is not written.
void gpu_attention_forward(DeviceContext& context, const DeviceTensor& qkv,
                           const AttentionShape& shape, DeviceTensor& out,
                           DeviceTensor* probabilities, const BlockDropoutKey* dropout,
                           DeviceTensor* lse = nullptr, const ContextKeys* context_keys = nullptr);
void gpu_attention_forward(DeviceContext& context, const KeptGemmInput& qkv,
                           const AttentionShape& shape, DeviceTensor& out,
                           DeviceTensor* probabilities, const BlockDropoutKey* dropout,
                           DeviceTensor* lse = nullptr, const ContextKeys* context_keys = nullptr);

// dqkv (overwritten; under context parallelism its q columns only) from
// dout; `probabilities` is forward's P or null to recompute it; `kept` is
// what the caller kept of a fused forward, or null.
void gpu_attention_backward(DeviceContext& context, const DeviceTensor& qkv,
                            const DeviceTensor* probabilities, const DeviceTensor& dout,
                            const AttentionShape& shape, DeviceTensor& dqkv,
                            const BlockDropoutKey* dropout, const FusedKept* kept = nullptr,
                            const ContextKeys* context_keys = nullptr);
void gpu_attention_backward(DeviceContext& context, const KeptGemmInput& qkv,
                            const DeviceTensor* probabilities, const DeviceTensor& dout,
                            const AttentionShape& shape, DeviceTensor& dqkv,
                            const BlockDropoutKey* dropout, const FusedKept* kept = nullptr,
                            const ContextKeys* context_keys = nullptr);

}  // namespace pipelab::gpu
