#include "gpu/layers/attention.h"

#include <atomic>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "gpu/kernels/attention_softmax.h"
#include "gpu/kernels/block_dropout.h"
#include "gpu/kernels/flash_attention.h"
#include "gpu/layers/attention_layout.h"
#include "gpu/layers/cublas_gemm.h"

namespace pipelab::gpu {
namespace {

float score_scale(const AttentionShape& shape) {  // as core/nn
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape.head_dim)));
}

bool active(const BlockDropoutKey* dropout) { return dropout && dropout->p > 0.0f; }

DeviceTensor workspace(DeviceContext& context, int64_t rows, int64_t cols) {
  return DeviceTensor::uninitialized(rows, cols, &context.allocator(), MemoryCategory::Workspace);
}

// `count` values as the batched GEMMs' input: under bf16-mixed rounded to
// bf16 once (Workspace, for the call), so the products read bf16 and
// accumulate and write float32, as autocast's bf16 matmuls; the softmax and
// its gradient stay float32.
RoundedGemmInput gemm_input(DeviceContext& context, const float* values, int64_t count) {
  return RoundedGemmInput(values, count, context.mixed_bf16(), &context.allocator());
}

// The fused kernels' view of the inputs.
flash_math::FlashInput flash_input(GemmInput qkv) { return {qkv.values, qkv.bf16}; }

// What the unfused path reads: the queries' rows, the keys' and values'
// rows (the same rows but under context parallelism), and which query each
// row of P is.
struct AttentionInputs {
  GemmInput queries;
  GemmInput keys;
  attention_math::QueryRows rows;
};

// The query rows as given, and the keys and values from them or, under
// context parallelism, from the gathered keys (rounded once per call under
// bf16-mixed, into `rounded_keys`).
AttentionInputs attention_inputs(DeviceContext& context, GemmInput queries,
                                 const AttentionShape& shape, const ContextKeys* context_keys,
                                 std::optional<RoundedGemmInput>& rounded_keys) {
  if (!context_keys) return {queries, queries, {}};
  assert(shape.queries > 0 && shape.packed_keys && context_keys->keys && context_keys->positions);
  assert(context_keys->keys->rows() == shape.key_rows() &&
         context_keys->keys->cols() == shape.key_width());
  rounded_keys.emplace(context_keys->keys->data(), context_keys->keys->size(), context.mixed_bf16(),
                       &context.allocator());
  return {queries, rounded_keys->at(), {shape.queries, context_keys->positions}};
}

BlockDropoutKey dropout_or_none(const BlockDropoutKey* dropout) {
  return active(dropout) ? *dropout : BlockDropoutKey{};
}

// The fused forward; lse into `lse` ([probability_rows, 1]).
void fused_forward(DeviceContext& context, GemmInput qkv_input, const AttentionShape& shape,
                   float* out, float* lse, const BlockDropoutKey* dropout) {
  kernels::flash_attention_forward(flash_input(qkv_input), flash_layout(shape),
                                   dropout_or_none(dropout), out, lse, context.stream());
}

// The fused backward: dQ and dK, dV from the forward's lse and output, as
// the caller kept them or (nothing kept) from the forward run again.
void fused_backward(DeviceContext& context, GemmInput qkv_input, const DeviceTensor& dout,
                    const AttentionShape& shape, DeviceTensor& dqkv, const BlockDropoutKey* dropout,
                    const FusedKept* kept) {
  FusedKept from = kept && kept->lse ? *kept : FusedKept{};
  DeviceTensor out, lse;
  if (!from.lse) {
    out = workspace(context, shape.rows(), shape.width());
    lse = workspace(context, shape.probability_rows(), 1);
    fused_forward(context, qkv_input, shape, out.data(), lse.data(), dropout);
    from = {&lse, {out.data(), nullptr}};
  }
  assert(from.lse->size() == shape.probability_rows());
  DeviceTensor row_dots = workspace(context, shape.probability_rows(), 1);
  kernels::flash_attention_backward(flash_input(qkv_input), flash_input(from.out), dout.data(),
                                    from.lse->data(), flash_layout(shape), dropout_or_none(dropout),
                                    row_dots.data(), dqkv.data(), context.stream());
}

// P from the query and key rows into `p` ([probability_rows, seq]), and
// rounded to bf16 into `p_bf16` unless that is null.
void compute_probabilities(DeviceContext& context, const AttentionInputs& in,
                           const AttentionShape& shape, float* p, uint16_t* p_bf16 = nullptr) {
  const HeadOperands op = head_operands(shape);
  for (int64_t b = 0; b < shape.batch; ++b)
    for (int64_t j = 0; j < shape.group(); ++j) {
      const GroupPlace at = group_place(shape, j);
      strided_batched_gemm(context.cublas(), in.queries.at(query_offset(shape, b) + at.q), op.query,
                           false, in.keys.at(key_offset(shape, b) + at.k), op.key, true,
                           p + square_offset(shape, b) + at.square, op.square, op.groups, 1.0f,
                           0.0f);
    }
  kernels::scaled_masked_softmax(p, p, shape.probability_rows(), shape.seq, score_scale(shape),
                                 shape.causal, context.stream(), p_bf16, in.rows);
}

// Under bf16-mixed, a buffer for the bf16 copy of a [probability_rows, seq]
// matrix that the softmax kernels write as they compute it; otherwise none.
std::optional<RoundedGemmInput> rounded_by_softmax(DeviceContext& context,
                                                   const AttentionShape& shape) {
  if (!context.mixed_bf16()) return std::nullopt;
  return RoundedGemmInput::written_by_kernel(shape.probability_rows() * shape.seq,
                                             &context.allocator());
}

// The forward with the QKV rows as its GEMMs read them (qkv_input), and the
// gathered keys under context parallelism.
void attention_forward(DeviceContext& context, GemmInput qkv_input, const AttentionShape& shape,
                       DeviceTensor& out, DeviceTensor* probabilities,
                       const BlockDropoutKey* dropout, DeviceTensor* kept_lse,
                       const ContextKeys* context_keys) {
  assert(out.rows() == shape.rows() && out.cols() == shape.width());
  if (uses_fused_attention(shape, probabilities != nullptr, qkv_input.bf16 != nullptr)) {
    DeviceTensor scratch;
    if (!kept_lse) scratch = workspace(context, shape.probability_rows(), 1);
    DeviceTensor& lse = kept_lse ? *kept_lse : scratch;
    assert(lse.size() == shape.probability_rows());
    return fused_forward(context, qkv_input, shape, out.data(), lse.data(), dropout);
  }
  std::optional<RoundedGemmInput> rounded_keys;
  const AttentionInputs in =
      attention_inputs(context, qkv_input, shape, context_keys, rounded_keys);
  const int64_t seq = shape.seq;
  DeviceTensor scratch;
  if (!probabilities) scratch = workspace(context, shape.probability_rows(), seq);
  float* p = probabilities ? probabilities->data() : scratch.data();
  // Without dropout, P is what weights V: the softmax rounds it as it writes it.
  std::optional<RoundedGemmInput> rounded_p;
  if (!active(dropout)) rounded_p = rounded_by_softmax(context, shape);
  compute_probabilities(context, in, shape, p, rounded_p ? rounded_p->rounded() : nullptr);
  DeviceTensor dropped;
  const float* weights = p;  // what weights V
  if (active(dropout)) {
    dropped = workspace(context, shape.probability_rows(), seq);
    kernels::attention_dropout(p, dropped.data(), shape.batch, shape.heads, seq, shape.first_head,
                               *dropout, context.stream(), in.rows);
    weights = dropped.data();
  }
  const RoundedGemmInput weights_input =
      rounded_p ? std::move(*rounded_p)
                : gemm_input(context, weights, shape.probability_rows() * seq);
  const HeadOperands op = head_operands(shape);
  for (int64_t b = 0; b < shape.batch; ++b)
    for (int64_t j = 0; j < shape.group(); ++j) {
      const GroupPlace at = group_place(shape, j);
      strided_batched_gemm(context.cublas(), weights_input.at(square_offset(shape, b) + at.square),
                           op.square, false, in.keys.at(key_offset(shape, b) + at.v), op.key, false,
                           out.data() + out_offset(shape, b) + at.out, op.out, op.groups, 1.0f,
                           0.0f);
    }
}

// Per head, with D the dropout mask times its scale (core/nn/attention.cpp):
//   dV = (P * D)^T dO,  dP = (dO V^T) * D,  dS = P * (dP - rowsum(P * dP)),
//   dQ = dS K / sqrt(d),  dK = dS^T Q / sqrt(d)
// with the QKV rows as its GEMMs read them (qkv_input). Under grouped-query
// attention the calls for place j > 0 add to their group's dK and dV (beta
// 1), in the CPU's head order. Under context parallelism dQ goes into dqkv's
// q columns and dK and dV into the context keys' key_grads (packed, every
// position of the sequence), which the caller sends home.
void attention_backward(DeviceContext& context, GemmInput qkv_input,
                        const DeviceTensor* probabilities, const DeviceTensor& dout,
                        const AttentionShape& shape, DeviceTensor& dqkv,
                        const BlockDropoutKey* dropout, const FusedKept* kept,
                        const ContextKeys* context_keys) {
  assert(dqkv.rows() == shape.rows() && dqkv.cols() == shape.qkv_width());
  assert(dout.rows() == shape.rows() && dout.cols() == shape.width());
  if (uses_fused_attention(shape, probabilities != nullptr, qkv_input.bf16 != nullptr))
    return fused_backward(context, qkv_input, dout, shape, dqkv, dropout, kept);
  std::optional<RoundedGemmInput> rounded_keys;
  const AttentionInputs in =
      attention_inputs(context, qkv_input, shape, context_keys, rounded_keys);
  float* d_keys = dqkv.data();  // where dK and dV go
  if (context_keys) {
    assert(context_keys->key_grads && context_keys->key_grads->rows() == shape.key_rows() &&
           context_keys->key_grads->cols() == shape.key_width());
    d_keys = context_keys->key_grads->data();
  }
  const int64_t seq = shape.seq;
  const cudaStream_t stream = context.stream();
  DeviceTensor recomputed;
  const float* p = probabilities ? probabilities->data() : nullptr;
  std::optional<RoundedGemmInput> rounded_p;  // as the forward's
  if (!p) {
    recomputed = workspace(context, shape.probability_rows(), seq);
    if (!active(dropout)) rounded_p = rounded_by_softmax(context, shape);
    compute_probabilities(context, in, shape, recomputed.data(),
                          rounded_p ? rounded_p->rounded() : nullptr);
    p = recomputed.data();
  }
  DeviceTensor dropped;
  const float* weights = p;
  if (active(dropout)) {
    dropped = workspace(context, shape.probability_rows(), seq);
    kernels::attention_dropout(p, dropped.data(), shape.batch, shape.heads, seq, shape.first_head,
                               *dropout, stream, in.rows);
    weights = dropped.data();
  }
  DeviceTensor dp = workspace(context, shape.probability_rows(), seq);
  const HeadOperands op = head_operands(shape);
  {  // the inputs rounded for dV and dP die before dS's
    const RoundedGemmInput weights_input =
        rounded_p ? std::move(*rounded_p) : gemm_input(context, weights, dp.size());
    const RoundedGemmInput dout_input = gemm_input(context, dout.data(), dout.size());
    for (int64_t b = 0; b < shape.batch; ++b)
      for (int64_t j = 0; j < shape.group(); ++j) {
        const GroupPlace at = group_place(shape, j);
        const GemmInput keys = in.keys.at(key_offset(shape, b));
        const GemmInput d_o = dout_input.at(out_offset(shape, b) + at.out);
        float* d_sequence_keys = d_keys + key_offset(shape, b);
        strided_batched_gemm(context.cublas(),
                             weights_input.at(square_offset(shape, b) + at.square), op.square, true,
                             d_o, op.out, false, d_sequence_keys + at.v, op.key, op.groups, 1.0f,
                             j == 0 ? 0.0f : 1.0f);
        strided_batched_gemm(context.cublas(), d_o, op.out, false, keys.at(at.v), op.key, true,
                             dp.data() + square_offset(shape, b) + at.square, op.square, op.groups,
                             1.0f, 0.0f);
      }
  }
  if (active(dropout))
    kernels::attention_dropout(dp.data(), dp.data(), shape.batch, shape.heads, seq,
                               shape.first_head, *dropout, stream, in.rows);
  // Under bf16-mixed the kernel writes dS rounded, and only that.
  std::optional<RoundedGemmInput> rounded_ds = rounded_by_softmax(context, shape);
  kernels::softmax_backward(p, dp.data(), shape.probability_rows(), seq, stream,
                            rounded_ds ? rounded_ds->rounded() : nullptr);
  const float scale = score_scale(shape);
  const RoundedGemmInput ds_input =
      rounded_ds ? std::move(*rounded_ds) : gemm_input(context, dp.data(), dp.size());
  for (int64_t b = 0; b < shape.batch; ++b)
    for (int64_t j = 0; j < shape.group(); ++j) {
      const GroupPlace at = group_place(shape, j);
      const GemmInput queries = in.queries.at(query_offset(shape, b));
      const GemmInput keys = in.keys.at(key_offset(shape, b));
      const GemmInput ds = ds_input.at(square_offset(shape, b) + at.square);
      strided_batched_gemm(context.cublas(), ds, op.square, false, keys.at(at.k), op.key, false,
                           dqkv.data() + query_offset(shape, b) + at.q, op.query, op.groups, scale,
                           0.0f);
      strided_batched_gemm(context.cublas(), ds, op.square, true, queries.at(at.q), op.query, false,
                           d_keys + key_offset(shape, b) + at.k, op.key, op.groups, scale,
                           j == 0 ? 0.0f : 1.0f);
    }
}

}  // namespace

flash_math::FlashLayout flash_layout(const AttentionShape& shape) {
  flash_math::FlashLayout layout;
  layout.batch = shape.batch;
  layout.seq = shape.seq;
  layout.heads = shape.heads;
  layout.head_dim = shape.head_dim;
  layout.group = shape.group();
  layout.first_head = shape.first_head;
  layout.causal = shape.causal;
  layout.scale = score_scale(shape);
  return layout;
}

namespace {

// A FusedAttention, or -1 until first asked: then from PIPELAB_FUSED_ATTENTION.
std::atomic<int> fused_attention_switch{-1};

}  // namespace

FusedAttention fused_attention_mode() {
  if (fused_attention_switch.load() < 0) {
    const char* value = std::getenv("PIPELAB_FUSED_ATTENTION");
    FusedAttention mode = FusedAttention::TensorCores;
    if (value && std::strcmp(value, "0") == 0) mode = FusedAttention::Off;
    if (value && std::strcmp(value, "1") == 0) mode = FusedAttention::All;
    int expected = -1;
    fused_attention_switch.compare_exchange_strong(expected, static_cast<int>(mode));
  }
  return static_cast<FusedAttention>(fused_attention_switch.load());
}

void set_fused_attention_mode(FusedAttention mode) {
  fused_attention_switch.store(static_cast<int>(mode));
}

bool uses_fused_attention(const AttentionShape& shape, bool keeps_probabilities, bool bf16_inputs) {
  // The fused kernels take whole sequences, not a context rank's queries.
  if (keeps_probabilities || shape.queries > 0) return false;
  switch (fused_attention_mode()) {
    case FusedAttention::Off:
      return false;
    case FusedAttention::TensorCores:
      return bf16_inputs && kernels::flash_attention_mma_supports(shape.head_dim);
    case FusedAttention::All:
      return kernels::flash_attention_supports(shape.head_dim, bf16_inputs);
  }
  return false;
}

void gpu_attention_forward(DeviceContext& context, const DeviceTensor& qkv,
                           const AttentionShape& shape, DeviceTensor& out,
                           DeviceTensor* probabilities, const BlockDropoutKey* dropout,
                           DeviceTensor* lse, const ContextKeys* context_keys) {
  assert(qkv.rows() == shape.rows() && qkv.cols() == shape.qkv_width());
  const RoundedGemmInput qkv_input = gemm_input(context, qkv.data(), qkv.size());
  attention_forward(context, qkv_input.at(), shape, out, probabilities, dropout, lse, context_keys);
}

void gpu_attention_forward(DeviceContext& context, const KeptGemmInput& qkv,
                           const AttentionShape& shape, DeviceTensor& out,
                           DeviceTensor* probabilities, const BlockDropoutKey* dropout,
                           DeviceTensor* lse, const ContextKeys* context_keys) {
  if (!qkv.bf16())
    return gpu_attention_forward(context, qkv.values(), shape, out, probabilities, dropout, lse,
                                 context_keys);
  assert(qkv.count() == shape.rows() * shape.qkv_width());
  attention_forward(context, qkv.gemm_input(), shape, out, probabilities, dropout, lse,
                    context_keys);
}

void gpu_attention_backward(DeviceContext& context, const DeviceTensor& qkv,
                            const DeviceTensor* probabilities, const DeviceTensor& dout,
                            const AttentionShape& shape, DeviceTensor& dqkv,
                            const BlockDropoutKey* dropout, const FusedKept* kept,
                            const ContextKeys* context_keys) {
  assert(qkv.same_shape(dqkv));
  const RoundedGemmInput qkv_input = gemm_input(context, qkv.data(), qkv.size());
  attention_backward(context, qkv_input.at(), probabilities, dout, shape, dqkv, dropout, kept,
                     context_keys);
}

void gpu_attention_backward(DeviceContext& context, const KeptGemmInput& qkv,
                            const DeviceTensor* probabilities, const DeviceTensor& dout,
                            const AttentionShape& shape, DeviceTensor& dqkv,
                            const BlockDropoutKey* dropout, const FusedKept* kept,
                            const ContextKeys* context_keys) {
  if (!qkv.bf16())
    return gpu_attention_backward(context, qkv.values(), probabilities, dout, shape, dqkv, dropout,
                                  kept, context_keys);
  assert(qkv.count() == dqkv.size());
  attention_backward(context, qkv.gemm_input(), probabilities, dout, shape, dqkv, dropout, kept,
                     context_keys);
}

}  // namespace pipelab::gpu
