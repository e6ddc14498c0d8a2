// One pre-norm GPT Transformer block, forward and backward, over the kernels
// of this folder (a later TransformerBlock layer wraps it):
//   h = x + proj(attention(qkv(norm1(x))))
//   y = h + ffn2(act(ffn1(norm2(h))))
// norm is the layer norm or RMSNorm, act GELU (tanh form) or SwiGLU (ffn1
// then outputs 2 ffn_hidden columns, [gate | up]), attention causal or not.
// x and y are [batch * seq, dim], row b * seq + t. With dropout (p > 0 in
// training), block_dropout.h's three masks apply:
//   h = x + drop2(proj(attention(qkv(norm1(x)), drop1)))
//   y = h + drop3(ffn2(act(ffn1(norm2(h)))))
// (the biases of proj and ffn2 inside the dropped values, as Megatron's
// bias-dropout-add).
//
// Grouped-query attention (kv_heads < heads): QKV's output is dim + 2
// kv_heads head_dim wide, in attention.h's query-group layout. Rotary
// position embeddings (rotary): q and k are turned by position after QKV
// (rotary.h), their gradients turned back before QKV's backward.
//
// Megatron tensor parallelism. Shard k of tp holds:
//   qkv   column-parallel by heads: heads / tp whole heads (kv_heads / tp whole
//         query groups). With attention.h's head-grouped layout that is
//         columns [k, k + 1) * W / tp of the full [dim, W] weight (W = 3 dim,
//         or dim + 2 kv_heads head_dim), and the same bias columns;
//   proj  row-parallel: rows [k, k + 1) * dim / tp (its heads' outputs);
//   ffn1  column-parallel: columns [k, k + 1) * f / tp (GELU); for SwiGLU those
//         columns of the gate and the same of the up half, as [gate | up];
//   ffn2  row-parallel: rows [k, k + 1) * f / tp;
//   norms and the row-parallel biases replicated (added once, after the all-reduce).
// x, y, dx and dy are whole (replicated) on every shard. Forward all-reduces
// (sums) the partial outputs of proj and of ffn2, backward the partial input
// gradients of ffn1 and of qkv: two each way, through the caller's
// AllReduceFunction (all_reduce.h), which sums over the shards in place.
// With tp = 1 pass all_reduce_nothing.
//
// Sequence parallelism (BlockShard::sequence_parallel, Korthikanti et al.):
// x, y, dx and dy hold only the shard's slice of the sequence, positions
// [k seq / tp, (k + 1) seq / tp) of every sample (sequence_split.h), and so do
// the norms, dropouts and residual adds. Each all-reduce above becomes a
// reduce-scatter onto the slices, and an all-gather of the norm output
// brings the whole sequence to QKV and FFN1. Backward, per half: gather the
// output gradient, scatter the norm output's gradient, and gather the norm
// output again for the column-parallel weight gradient (Megatron-LM gathers
// again rather than keep the whole sequence). The norm gains' and biases'
// gradients then come from the slice only: the tensor-parallel group sums
// them once per step (GptBlock::sequence_partial_gradients).
//
// Context parallelism (BlockShard::cp > 1; context_split.h): x, y, dx and dy
// hold the rank's seq / cp positions of every sample (two chunks, in position
// order), and so does everything but the attention's keys. After QKV (and
// rotary, by the global positions) the attention is ring attention: each
// rank packs its keys and values, the ring all-gather passes every rank's on
// round the context-parallel group, and as each block lands (already passed
// on) the rank merges it into its queries' running softmax
// (blockwise_attention.h), keeping each query's log-sum-exp instead of P
// (keep_attention_probabilities does not apply). The backward brings the
// blocks round again: as each lands the rank adds its queries' dq and writes
// that block's dk and dv, and a reduce-scatter sums every block's at home,
// where they join the rank's dq. Every weight gradient is then the rank's tokens' share: the
// data-parallel group, which spans the context ranks, sums them. Under
// sequence parallelism too, the tensor-parallel shards split the rank's
// positions (shard k holds rows [k, k + 1) seq / (cp tp) of the rank's).
// Dropout draws each value's mask by its global position.
//
// Initial weights depend only on (seed, layer) and the element's place in the
// full block, so a shard initialised for its slice holds exactly that slice
// (slice_block_tensors cuts it from a full block's tensors). Linear weights and
// biases: uniform(-1/sqrt(in), 1/sqrt(in)) of the full linear (PyTorch's nn.Linear
// default, as init.h), element (i, j) of a full [in, out] tensor keyed
//   combine_key(combine_key(layer_key(seed, TransformerBlock, layer), tensor), i * out + j)
// where tensor is the BlockTensor number below. Norm gains start at 1, biases at 0.
//
// What is kept. forward fills a GptBlockCache: every tensor backward reads
// (Korthikanti et al.'s per-layer activations), the attention probabilities
// only with keep_attention_probabilities (otherwise backward recomputes them
// per head: selective recompute). The caller keeps x (and, until
// backward_weight, dy), as with every layer (basic_layer.h). backward_input
// leaves in the cache the gradients backward_weight needs, so the two can run
// apart (zero-bubble schedules' BI and BW).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/model/model_spec.h"
#include "core/model/transformer_block.h"
#include "core/nn/all_reduce.h"
#include "core/nn/attention.h"
#include "core/nn/block_dropout.h"
#include "core/nn/block_state.h"
#include "core/nn/context_split.h"
#include "core/nn/rotary.h"
#include "core/nn/sequence_split.h"
#include "core/nn/tensor.h"

namespace pipelab {

// NormType and BlockActivation are the model's (core/model/transformer_block.h).

struct GptBlockConfig {
  int64_t dim = 0;
  int64_t heads = 0;
  int64_t ffn_hidden = 0;  // f: the feed-forward's hidden width (SwiGLU: after the gate)
  NormType norm = NormType::LayerNorm;
  BlockActivation activation = BlockActivation::Gelu;
  bool causal = true;
  bool bias = true;  // biases on the four linears (LLaMA-style blocks have none)
  bool keep_attention_probabilities = true;  // false: recompute them in backward
  float dropout = 0.0f;  // p of the three in-block dropouts, in [0, 1)
  // false: the block holds no FFN1 and FFN2, and its owner runs the MLP (a
  // mixture of experts) between forward_attention and backward_attention.
  bool dense_mlp = true;
  int64_t kv_heads = 0;  // key/value heads (grouped-query attention); 0 means heads
  bool rotary = false;   // rotary position embeddings on q and k (rotary.h)
  double rotary_theta = kDefaultRopeTheta;  // their base

  int64_t head_dim() const { return heads > 0 ? dim / heads : 0; }
  int64_t key_value_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  // QKV's full output width: dim + 2 key_value_heads head_dim (3 dim without grouping).
  int64_t qkv_width() const { return dim + 2 * key_value_heads() * head_dim(); }
  // ffn1's full output width: f, or 2 f for SwiGLU.
  int64_t ffn1_width() const {
    return activation == BlockActivation::SwiGlu ? 2 * ffn_hidden : ffn_hidden;
  }
};

// Which tensor-parallel shard of the block this is.
struct BlockShard {
  int tp = 1;
  int shard = 0;
  bool sequence_parallel = false;  // with tp > 1: split along the sequence too
  int cp = 1;                      // context-parallel ranks splitting the sequence
  int context = 0;                 // this rank among them

  bool splits_sequence() const { return sequence_parallel && tp > 1; }
  bool splits_context() const { return cp > 1; }
};

// The collectives a shard's block runs: the all-reduce of plain tensor
// parallelism, or sequence parallelism's gather and scatter; and context
// parallelism's gather and scatter over the context-parallel group.
struct BlockCollectives {
  AllReduceFunction all_reduce_sum = all_reduce_nothing;
  SequenceCollectives sequence;
  ContextCollectives context;
};

// Throws std::invalid_argument, saying what to change, unless every width is
// positive, heads divides dim, kv_heads divides heads, tp divides heads,
// kv_heads and ffn_hidden, the head width is even under rotary embeddings,
// and dropout is in [0, 1).
void check_gpt_block(const GptBlockConfig& config, const BlockShard& shard);

// The attention core's shape of a block shard for `batch` sequences of `seq`
// tokens (attention.h); under context parallelism the rank's queries, at
// `positions` (its global positions, owned by the caller), against packed
// keys and values.
AttentionShape block_attention_shape(const GptBlockConfig& config, const BlockShard& shard,
                                     int64_t batch, int64_t seq, const int64_t* positions);

// Throws std::invalid_argument unless the shard can split a `seq`-token
// sequence: into 2 cp equal chunks under context parallelism, and the rank's
// positions into tp slices under sequence parallelism.
void check_block_sequence(const BlockShard& shard, int64_t seq);

// The block's trainable tensors (and, in the same shapes, their gradients),
// as one shard holds them. Norm biases and linear biases are empty when the
// config has none (RMSNorm has no bias).
using GptBlockTensors = BasicBlockTensors<Tensor>;  // block_state.h

// The key number of each linear tensor in the init formula above.
enum class BlockTensor : uint64_t {
  QkvWeight = 1,
  QkvBias = 2,
  ProjWeight = 3,
  ProjBias = 4,
  Ffn1Weight = 5,
  Ffn1Bias = 6,
  Ffn2Weight = 7,
  Ffn2Bias = 8,
};

// Shard `shard`'s slice of a full (tp = 1) block's tensors: weights when
// loading a checkpoint into shards, gradients when comparing them.
GptBlockTensors slice_block_tensors(GptBlockTensors& full, const GptBlockConfig& config,
                                    const BlockShard& shard,
                                    DeviceAllocator* allocator = nullptr);

// The inverse: writes shard `shard`'s tensors into their places in the full
// block's (evaluation gathers the trained shards into one model this way).
// Replicated tensors are copied from every shard (they are equal).
void paste_block_tensors(GptBlockTensors& full, GptBlockTensors& part,
                         const GptBlockConfig& config, const BlockShard& shard);

// What one micro-batch's forward keeps for its backward ([rows, ...] with rows
// = batch * seq; widths are the shard's), then what backward_input keeps for
// backward_weight. The block sizes them on first use and reuses them.
struct GptBlockCache {
  int64_t batch = 0;
  int64_t seq = 0;
  BlockDropout dropout;  // the forward's, for the backward to regenerate its masks
  // forward
  Tensor norm1_out;       // [rows, dim]
  Tensor qkv;             // [rows, qkv_width / tp], q and k turned under rotary
  Tensor probabilities;   // [batch * heads / tp * seq, seq]; empty under recompute
  Tensor lse;             // context parallelism: [probability_rows, 1], instead of P
  Tensor attention_out;   // [rows, dim / tp]
  Tensor h;               // [rows, dim]: the residual stream between the halves
  Tensor norm2_out;       // [rows, dim]
  Tensor ffn1_out;        // [rows, ffn1_width / tp]
  Tensor activation_out;  // [rows, f / tp]
  // backward_input
  Tensor d_activation_out;  // [rows, f / tp] (scratch)
  Tensor d_ffn1_out;        // [rows, ffn1_width / tp]
  Tensor d_norm2_out;       // [rows, dim], all-reduced
  Tensor d_h;               // [rows, dim]
  Tensor d_attention_out;   // [rows, dim / tp] (scratch)
  Tensor d_qkv;             // [rows, qkv_width / tp]
  Tensor d_norm1_out;       // [rows, dim], all-reduced
  // With dropout or sequence parallelism only: the gradients of proj's and
  // ffn2's outputs (after their masks, the whole sequence), which
  // backward_weight reads; otherwise they are d_h and dy.
  Tensor d_proj_out;  // [rows, dim]
  Tensor d_ffn2_out;  // [rows, dim]
  // Sequence parallelism: norm1_out and norm2_out gathered again for the
  // weight gradients of QKV and FFN1. Under it, the [rows, dim] tensors
  // above that touch the residual stream (norm1_out, h, norm2_out,
  // d_norm2_out, d_h, d_norm1_out) hold the shard's rows only.
  Tensor norm1_gathered;  // [rows, dim]
  Tensor norm2_gathered;  // [rows, dim]

  // Floats forward keeps for backward (the first group above).
  int64_t forward_floats() const;

  // Every tensor above, for BasicBlockState's bytes() and tensors().
  template <typename Cache>
  static auto all_tensors(Cache& cache) {
    return std::array{&cache.norm1_out,
                      &cache.qkv,
                      &cache.probabilities,
                      &cache.lse,
                      &cache.attention_out,
                      &cache.h,
                      &cache.norm2_out,
                      &cache.ffn1_out,
                      &cache.activation_out,
                      &cache.d_activation_out,
                      &cache.d_ffn1_out,
                      &cache.d_norm2_out,
                      &cache.d_h,
                      &cache.d_attention_out,
                      &cache.d_qkv,
                      &cache.d_norm1_out,
                      &cache.d_proj_out,
                      &cache.d_ffn2_out,
                      &cache.norm1_gathered,
                      &cache.norm2_gathered};
  }
};

class GptBlock {
 public:
  // Allocates zero weights and gradients for the shard (call init to fill the
  // weights). Throws like check_gpt_block.
  GptBlock(const GptBlockConfig& config, const BlockShard& shard,
           DeviceAllocator* allocator = nullptr);

  // Deterministic initial weights for model layer `layer` (formula above).
  void init(uint64_t seed, int layer);

  // y [batch * seq, dim] from x [batch * seq, dim]; fills cache. `dropout`
  // says which masks this micro-batch draws (its p is 0 for no dropout, as in
  // evaluation). Throws std::invalid_argument when x or y is not [batch * seq, dim].
  // Under sequence parallelism x and y are [batch * seq / tp, dim] (the
  // shard's positions) and seq is still the whole sequence length; under
  // context parallelism [batch * seq / (cp tp), dim] likewise.
  void forward(const Tensor& x, int64_t batch, int64_t seq, GptBlockCache& cache, Tensor& y,
               const BlockCollectives& collectives, const BlockDropout& dropout = {}) const;
  void forward(const Tensor& x, int64_t batch, int64_t seq, GptBlockCache& cache, Tensor& y,
               const AllReduceFunction& all_reduce_sum, const BlockDropout& dropout = {}) const {
    forward(x, batch, seq, cache, y, BlockCollectives{all_reduce_sum, {}, {}}, dropout);
  }
  // dx from dy, for the x of the forward that filled cache; keeps in cache
  // what backward_weight needs.
  void backward_input(const Tensor& x, const Tensor& dy, GptBlockCache& cache, Tensor& dx,
                      const BlockCollectives& collectives) const;
  void backward_input(const Tensor& x, const Tensor& dy, GptBlockCache& cache, Tensor& dx,
                      const AllReduceFunction& all_reduce_sum) const {
    backward_input(x, dy, cache, dx, BlockCollectives{all_reduce_sum, {}, {}});
  }
  // The block up to the MLP's input, for an owner that runs the MLP itself
  // (config.dense_mlp false): forward_attention fills the cache up to h and
  // norm2_out; the owner computes y = h + MLP(norm2_out), puts the MLP's
  // input gradient in cache.d_norm2_out, and backward_attention takes it
  // back to dx (dy: the block output's gradient, for the residual).
  void forward_attention(const Tensor& x, int64_t batch, int64_t seq, GptBlockCache& cache,
                         const BlockCollectives& collectives, const BlockDropout& dropout) const;
  void backward_attention(const Tensor& x, const Tensor& dy, GptBlockCache& cache, Tensor& dx,
                          const BlockCollectives& collectives) const;
  // Adds this micro-batch's weight gradients into gradients(); needs no
  // collective (the replicated tensors' gradients are equal on every shard).
  void backward_weight(const Tensor& x, const Tensor& dy, const GptBlockCache& cache);
  void backward(const Tensor& x, const Tensor& dy, GptBlockCache& cache, Tensor& dx,
                const BlockCollectives& collectives) {
    backward_input(x, dy, cache, dx, collectives);
    backward_weight(x, dy, cache);
  }
  void backward(const Tensor& x, const Tensor& dy, GptBlockCache& cache, Tensor& dx,
                const AllReduceFunction& all_reduce_sum) {
    backward(x, dy, cache, dx, BlockCollectives{all_reduce_sum, {}, {}});
  }

  // Under sequence parallelism, the gradients taken from the shard's slice
  // of the sequence only (the norms' gains and biases); empty otherwise.
  std::vector<Tensor*> sequence_partial_gradients();

  const GptBlockConfig& config() const { return config_; }
  const BlockShard& shard() const { return shard_; }
  GptBlockTensors& weights() { return weights_; }
  const GptBlockTensors& weights() const { return weights_; }
  GptBlockTensors& gradients() { return gradients_; }
  void zero_grad();

  // The sequence moves of the two halves, public for an owner that runs the
  // MLP itself (its experts gather, sum and scatter as the dense MLP does).
  // The gradient of an output that went through dropout at `site` (and,
  // under sequence parallelism, is gathered to the whole sequence) into
  // `kept`, or `grad` itself when nothing changes it.
  const Tensor& output_gradient(const Tensor& grad, BlockDropoutSite site, GptBlockCache& cache,
                                Tensor& kept, const BlockCollectives& collectives) const;
  SequenceSlice sequence_slice(int64_t batch, int64_t seq) const;
  // The positions this context rank holds of a `seq`-token sequence: seq, or seq / cp.
  int64_t context_positions_of(int64_t seq) const { return seq / shard_.cp; }
  // Their global positions (context_split.h), or null without context
  // parallelism (the rows are positions 0, 1, ...).
  const int64_t* global_positions(int64_t seq) const;
  // The whole sequence of `local` (the norm output): `local` itself without
  // sequence parallelism, else gathered into `whole`.
  const Tensor& whole_sequence(const Tensor& local, const SequenceSlice& slice, Tensor& whole,
                               const BlockCollectives& collectives) const;
  // Sums the shards' partial `whole` onto `local`: in place by the all-reduce
  // (then `local` is `whole`), or reduce-scattered onto the shard's rows.
  void sum_partials(Tensor& whole, const SequenceSlice& slice, Tensor& local,
                    const BlockCollectives& collectives) const;

 private:
  AttentionShape attention_shape(int64_t batch, int64_t seq) const;
  // Whether the forward keeps P for the backward: unless recomputed
  // (selective recomputation) or under context parallelism.
  bool keeps_probabilities() const {
    return config_.keep_attention_probabilities && !shard_.splits_context();
  }
  // Context parallelism's ring attention (the class comment): the forward
  // into cache.attention_out and cache.lse, the backward into cache.d_qkv.
  void ring_attention_forward(GptBlockCache& cache, const AttentionShape& shape,
                              const ContextCollectives& context, const BlockDropout& dropout) const;
  void ring_attention_backward(GptBlockCache& cache, const ContextCollectives& context) const;
  void norm_forward(const Tensor& gain, const Tensor& bias, const Tensor& x, Tensor& y) const;
  void norm_backward_input(const Tensor& gain, const Tensor& x, const Tensor& dy, Tensor& dx) const;
  void norm_backward_weight(const Tensor& x, const Tensor& dy, Tensor& gain_grad,
                            Tensor& bias_grad) const;

  // The rotary angles for `seq` positions, made on first use (a block sees one length).
  const RotaryTable& rotary_angles(int64_t seq) const;

  const GptBlockConfig config_;
  const BlockShard shard_;
  DeviceAllocator* const allocator_;
  GptBlockTensors weights_;
  GptBlockTensors gradients_;
  mutable RotaryTable rotary_;  // only under config_.rotary; the owning device's thread fills it
  mutable std::vector<int64_t>
      positions_;  // cp > 1: the rank's global positions, made on first use
};

}  // namespace pipelab
