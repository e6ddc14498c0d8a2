#include "core/model/transformer_block.h"

#include <algorithm>

namespace pipelab {
namespace {

// FLOPs per element of the block's elementwise work, counted the way a
// straightforward kernel spends them (as for the elementwise layers in
// model_spec.cpp): they only need the right size next to the GEMMs.
constexpr double kNormForward = 8, kNormBackwardInput = 10, kNormBackwardWeight = 3;
constexpr double kSoftmaxForward = 5, kSoftmaxBackward = 4;  // per attention score
constexpr double kGeluForward = 8, kGeluBackward = 12;       // per hidden element
constexpr double kSwiGluForward = 6, kSwiGluBackward = 10;   // per hidden element (both halves)
constexpr double kDropoutForward = 2, kDropoutBackward = 1;
constexpr double kResidual = 1;
constexpr double kRotary = 3;  // per rotated value: two products and a sum

// The block's GEMMs by shape, per sample: QKV, Proj and (without experts) the
// MLP's two linears as this shard holds them, and the attention core per
// head of the shard: Q K^T and P V forward; dP = dO V^T, dV = P^T dO, dQ =
// dS K and dK = dS^T Q backward, each query row against every key.
void add_block_gemms(SampleGemms& gemms, const TransformerBlockShape& shape,
                     const BlockSplit& split) {
  const bool recomputes = recomputes_attention(split);
  const int64_t tp = split.tp;
  const int64_t s = shape.tokens;
  const int64_t keys = s * split.cp;
  const int64_t h = shape.dim;
  const int64_t head = shape.dim / shape.heads;
  const int64_t heads = shape.heads / tp;
  gemms.add_linear(s, h, shape.qkv_width() / tp);
  gemms.add_linear(s, h / tp, h);
  if (!shape.has_experts()) {
    const int64_t ffn1_out =
        shape.activation == BlockActivation::SwiGlu ? 2 * shape.ffn : shape.ffn;
    gemms.add_linear(s, h, ffn1_out / tp);
    gemms.add_linear(s, shape.ffn / tp, h);
  }
  gemms.forward.push_back({{s, keys, head, heads}, SampleAxis::Batch});
  gemms.forward.push_back({{s, head, keys, heads}, SampleAxis::Batch});
  gemms.backward_input.push_back({{s, keys, head, heads}, SampleAxis::Batch});
  gemms.backward_input.push_back({{keys, head, s, heads}, SampleAxis::Batch});
  gemms.backward_input.push_back({{s, head, keys, heads}, SampleAxis::Batch});
  gemms.backward_input.push_back({{keys, head, s, heads}, SampleAxis::Batch});
  if (recomputes) {
    gemms.backward_input.push_back({{s, keys, head, heads}, SampleAxis::Batch});
    gemms.backward_input.push_back({{s, head, keys, heads}, SampleAxis::Batch});
  }
}

}  // namespace

bool recomputes_attention(const BlockSplit& split) {
  return split.selective_recompute || split.cp > 1;
}

int64_t transformer_block_params(const TransformerBlockShape& shape) {
  const int64_t h = shape.dim;
  const int64_t f = shape.ffn;
  const int64_t ffn1_out = shape.activation == BlockActivation::SwiGlu ? 2 * f : f;
  const int64_t qkv = shape.qkv_width();
  const int64_t biases = shape.bias ? qkv + h + ffn1_out + h : 0;
  const int64_t norms = shape.norm == NormType::LayerNorm ? 2 * 2 * h : 2 * h;
  return h * qkv + h * h + h * ffn1_out + f * h + biases + norms;
}

BlockCost transformer_block_cost(const TransformerBlockShape& shape, const BlockSplit& split) {
  const double s = static_cast<double>(shape.tokens);
  const double keys = s * split.cp;  // positions each query attends to (the whole sequence)
  const double h = static_cast<double>(shape.dim);
  const double a = static_cast<double>(shape.heads);
  const double f = static_cast<double>(shape.ffn);
  const double t = static_cast<double>(split.tp);
  const int64_t tp = split.tp;
  const bool recomputes = recomputes_attention(split);
  const bool swiglu = shape.activation == BlockActivation::SwiGlu;
  const double ffn1_out = swiglu ? 2 * f : f;
  // Work on the full width (norms, residuals, the dropouts after Proj and
  // FFN2) is repeated on every shard, unless sequence parallelism splits it.
  const double repeated = split.sequence_parallel ? 1.0 / t : 1.0;

  BlockCost cost;
  // --- parameters: GEMM weights split over the shards; the row-parallel
  // biases and the norms are whole on every shard (as in Megatron-LM).
  const int64_t hi = shape.dim, fi = shape.ffn, ffn1_width = swiglu ? 2 * fi : fi;
  const int64_t qkv_width = shape.qkv_width();  // 3 h, or h + 2 kv_width under grouped-query attention
  const double qkv = static_cast<double>(qkv_width);
  const double kv = static_cast<double>(shape.kv_width());
  const int64_t norm_params = shape.norm == NormType::LayerNorm ? 4 * hi : 2 * hi;
  cost.params = (hi * qkv_width + hi * hi) / tp + norm_params;
  if (shape.bias) cost.params += qkv_width / tp + hi;

  // --- FLOPs per sample (a multiply-add is 2), the attention half's here.
  const double gemm = 2 * s * h * (qkv + h) / t;                    // QKV, Proj
  const double scores = a * s * keys / t;                           // attention scores per shard
  const double attention_forward = 4 * s * keys * h / t;            // Q K^T and P V
  const double attention_backward = 8 * s * keys * h / t;           // dQ, dK, dP, dV
  cost.attention_flops = attention_forward;
  const double bias = shape.bias ? s * qkv / t + s * h : 0;
  // Rotary embeddings turn each pair of Q and K values by their position: a
  // multiply-add per value, forward and again (transposed) in the backward.
  const double rotated = shape.rotary ? s * (h + kv) / t : 0;
  const double full_width = s * h * repeated;                       // elements of a norm or residual
  const double dropout_elements = shape.dropout ? scores + 2 * full_width : 0;
  cost.forward_flops = gemm + attention_forward + bias + kRotary * rotated + kSoftmaxForward * scores +
                       2 * kNormForward * full_width + 2 * kResidual * full_width +
                       kDropoutForward * dropout_elements;
  cost.backward_input_flops = gemm + attention_backward + kRotary * rotated + kSoftmaxBackward * scores +
                              2 * kNormBackwardInput * full_width + 2 * kResidual * full_width +
                              kDropoutBackward * dropout_elements;
  cost.backward_weight_flops = gemm + bias + 2 * kNormBackwardWeight * full_width;

  // --- the MLP: FFN1, the activation and FFN2, or the mixture of experts.
  const int64_t sh = shape.tokens * shape.dim;
  const int64_t sf = shape.tokens * shape.ffn;
  int64_t mlp_kept_values = 0;  // beyond Norm2's output (the MLP's input)
  if (shape.has_experts()) {
    const MoeCost moe = moe_cost(shape.moe(), split.tp);
    cost.params += moe.params;
    cost.forward_flops += moe.forward_flops;
    cost.backward_input_flops += moe.backward_input_flops;
    cost.backward_weight_flops += moe.backward_weight_flops;
    mlp_kept_values = moe.kept_values;
  } else {
    cost.params += (hi * ffn1_width + fi * hi) / tp;
    if (shape.bias) cost.params += ffn1_width / tp + hi;
    const double mlp_gemm = 2 * s * h * (ffn1_out + f) / t;
    const double mlp_bias = shape.bias ? s * ffn1_out / t + s * h : 0;
    const double hidden = s * f / t;
    cost.forward_flops += mlp_gemm + mlp_bias + (swiglu ? kSwiGluForward : kGeluForward) * hidden;
    cost.backward_input_flops += mlp_gemm + (swiglu ? kSwiGluBackward : kGeluBackward) * hidden;
    cost.backward_weight_flops += mlp_gemm + mlp_bias;
    mlp_kept_values = (swiglu ? 2 * sf : sf) / tp  // the activation's input (FFN1's output)
                      + sf / tp;                   // FFN2's input (the activation's output)
  }
  add_block_gemms(cost.gemms, shape, split);
  // Selective recomputation (and context parallelism's blockwise attention)
  // runs the attention core's forward again in the backward.
  if (recomputes)
    cost.backward_input_flops += attention_forward + kSoftmaxForward * scores +
                                 (shape.dropout ? kDropoutForward * scores : 0);

  // --- memory-bound kernels, values read plus written per sample. Forward:
  // two norms (read x, write y), softmax (read, write), attention dropout
  // (read, write), two bias-dropout-residual adds (read the GEMM's output
  // and the residual, write the sum), the MLP's bias-activation (GELU: read,
  // write; SwiGLU: read two halves, write one). Backward: two norms (read x
  // and dy, write dx), two dropout-residual gradients (read, write), softmax
  // (read P and dP, write dS), dropout (read, write), the activation (GELU:
  // read x and dy, write dx; SwiGLU: read both halves and dy, write two).
  const double score_dropout = shape.dropout ? 2 * scores : 0;
  cost.forward_memory_values = 10 * full_width + 2 * scores + score_dropout + 2 * rotated;
  cost.backward_memory_values = 10 * full_width + 3 * scores + score_dropout + 2 * rotated;
  if (!shape.has_experts()) {
    const double hidden = s * f / t;
    cost.forward_memory_values += (swiglu ? 3 : 2) * hidden;
    cost.backward_memory_values += (swiglu ? 5 : 3) * hidden;
  }
  if (recomputes) cost.backward_memory_values += 2 * scores + score_dropout;

  // --- kept activations, Korthikanti et al.'s items (see the header).
  const int64_t score_count = shape.heads * shape.tokens * shape.tokens * split.cp;
  const int64_t rep_div = split.sequence_parallel ? tp : 1;
  BlockActivations& kept = cost.kept;
  kept.values += sh / rep_div;          // Norm1's input
  kept.values += sh / rep_div;          // QKV's input (Norm1's output)
  const int64_t skv = shape.tokens * shape.kv_width();  // K's (or V's) values per sample
  kept.values += (sh + skv) / tp;       // Q and K, for the scores' backward
  // Context parallelism's blockwise attention keeps each query's log-sum-exp
  // instead of P (core/nn/blockwise_attention.h).
  const int64_t lse_count = split.cp > 1 ? shape.heads * shape.tokens / tp : 0;
  kept.values += lse_count;
  if (!recomputes) {
    kept.values += score_count / tp;    // softmax output
    if (shape.dropout) {
      kept.values += score_count / tp;  // the dropped-out scores, for P V's backward
      kept.mask_bytes += score_count / tp;
    }
  }
  kept.values += skv / tp;              // V
  kept.values += sh / tp;               // Proj's input
  if (shape.dropout) kept.mask_bytes += sh / rep_div;  // dropout after Proj
  kept.values += sh / rep_div;          // Norm2's input
  kept.values += sh / rep_div;          // FFN1's input (Norm2's output)
  kept.values += mlp_kept_values;
  if (shape.dropout) kept.mask_bytes += sh / rep_div;  // dropout after FFN2

  cost.input_values = sh / rep_div;
  cost.allreduce_values = sh;

  // --- the backward's gradient buffers, as gpt_block.cpp allocates them.
  // A dense MLP keeps dFFN1's output for BW; the experts add their weight
  // gradients in BI (moe_layer.h) and keep nothing for BW: their masked or
  // gathered output gradient and (sequence parallel) Norm2's output gathered
  // again are freed when their backward ends (transformer_block_layer.cpp).
  const int64_t local = sh / rep_div;  // a residual-stream tensor as the shard holds it
  const bool experts = shape.has_experts();
  const bool whole_output_gradients = shape.dropout || split.sequence_parallel;
  int64_t kept_for_weights = (experts ? 0 : (swiglu ? 2 * sf : sf) / tp)  // dFFN1 out
                             + local + local                          // dNorm2 out, dh
                             + (sh + 2 * skv) / tp                    // dQKV
                             + local;                                 // dNorm1 out
  if (whole_output_gradients) kept_for_weights += sh;                 // dProj out (whole)
  if (split.sequence_parallel) kept_for_weights += sh;                // Norm1's output gathered again
  // Under sequence parallelism the attention half's backward also holds
  // dNorm1 out's whole partial sum (scratch) until the scatter has read it.
  const int64_t partial_sum = split.sequence_parallel ? sh : 0;
  // Under context parallelism the attention's backward holds every rank's K
  // and V gathered again and their gradients (the whole sequence's, packed)
  // until the reduce-scatter has sent them home; Norm1's output is gathered
  // again (sequence parallelism) only after that, so the two never coexist.
  const int64_t context_gathered = split.cp > 1 ? 2 * (2 * skv * split.cp) / tp : 0;
  const int64_t norm1_gathered = split.sequence_parallel ? sh : 0;
  const int64_t attention_transient =
      std::max(context_gathered, norm1_gathered) - norm1_gathered;  // beyond kept_for_weights
  // What BI frees of the kept values before the wait for BW, which does not
  // read them (transformer_block_layer.cpp's backward_input_with): Q, K and
  // V, the softmax output, FFN1's output, and under sequence parallelism the
  // norms' outputs (BW reads their gathered copies).
  const int64_t freed_by_input_gradient =
      (sh + 2 * skv) / tp + (recomputes ? lse_count : score_count / tp) +
      (experts ? 0 : (swiglu ? 2 * sf : sf) / tp) + (split.sequence_parallel ? 2 * local : 0);
  if (experts) {
    cost.backward_kept_values = kept_for_weights - freed_by_input_gradient;
    // The experts' backward runs before the attention half's buffers exist;
    // BI drops the experts' kept values, so between BI and BW the block holds
    // that much less.
    // While the experts' backward runs, the block also holds the MLP's output
    // gradient masked or gathered (whole), and Norm2's output gathered again.
    const MoeCost moe = moe_cost(shape.moe(), split.tp);
    const int64_t experts_working = moe.backward_working_values +
                                    (whole_output_gradients ? sh : 0) +
                                    (split.sequence_parallel ? sh : 0);
    cost.backward_working_values = std::max(experts_working,
                                            kept_for_weights + sh / tp + partial_sum +
                                                attention_transient)  // dattention (scratch)
                                   + local;                           // dx
    cost.backward_kept_values -= moe.kept_values;
  } else {
    if (whole_output_gradients) kept_for_weights += sh;  // dFFN2 out (whole)
    if (split.sequence_parallel) kept_for_weights += sh;  // Norm2's output gathered again
    cost.backward_kept_values = kept_for_weights - freed_by_input_gradient;
    cost.backward_working_values = kept_for_weights + sf / tp + sh / tp  // dactivation, dattention
                                   + partial_sum + attention_transient + local;  // dx
  }
  return cost;
}

}  // namespace pipelab
