#include "core/nn/gpt_block.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/nn/activations.h"
#include "core/nn/blockwise_attention.h"
#include "core/nn/counter_rng.h"
#include "core/nn/init.h"
#include "core/nn/layer_norm.h"
#include "core/nn/linear.h"
#include "core/nn/rms_norm.h"
#include "core/nn/swiglu.h"
#include "core/nn/tensor_parallel.h"

namespace pipelab {
namespace {

// The widths one shard holds.
struct ShardWidths {
  int64_t qkv = 0;        // qkv_width / tp
  int64_t attention = 0;  // dim / tp
  int64_t heads = 0;      // heads / tp
  int64_t ffn = 0;        // f / tp
  int64_t ffn1 = 0;       // ffn1_width / tp
};

ShardWidths shard_widths(const GptBlockConfig& config, int tp) {
  return {config.qkv_width() / tp, config.dim / tp, config.heads / tp, config.ffn_hidden / tp,
          config.ffn1_width() / tp};
}

Tensor make(int64_t rows, int64_t cols, DeviceAllocator* allocator, MemoryCategory category) {
  return Tensor(rows, cols, allocator, category);
}

// Zero tensors in the shard's shapes.
GptBlockTensors shard_tensors(const GptBlockConfig& config, int tp, DeviceAllocator* allocator,
                              MemoryCategory category) {
  const ShardWidths w = shard_widths(config, tp);
  const int64_t dim = config.dim;
  const int64_t bias_rows = config.bias ? 1 : 0;
  const int64_t norm_bias = config.norm == NormType::LayerNorm ? 1 : 0;
  GptBlockTensors t;
  t.norm1_gain = make(1, dim, allocator, category);
  t.norm1_bias = make(norm_bias, norm_bias * dim, allocator, category);
  t.qkv_weight = make(dim, w.qkv, allocator, category);
  t.qkv_bias = make(bias_rows, bias_rows * w.qkv, allocator, category);
  t.proj_weight = make(w.attention, dim, allocator, category);
  t.proj_bias = make(bias_rows, bias_rows * dim, allocator, category);
  t.norm2_gain = make(1, dim, allocator, category);
  t.norm2_bias = make(norm_bias, norm_bias * dim, allocator, category);
  if (!config.dense_mlp) return t;
  t.ffn1_weight = make(dim, w.ffn1, allocator, category);
  t.ffn1_bias = make(bias_rows, bias_rows * w.ffn1, allocator, category);
  t.ffn2_weight = make(w.ffn, dim, allocator, category);
  t.ffn2_bias = make(bias_rows, bias_rows * dim, allocator, category);
  return t;
}

// Columns [a_begin, a_begin + half) then [b_begin, b_begin + half) of `full`,
// side by side: a SwiGLU shard's [gate | up] slice.
Tensor two_column_blocks(const Tensor& full, int64_t a_begin, int64_t b_begin, int64_t half,
                         DeviceAllocator* allocator) {
  Tensor part(full.rows(), 2 * half, allocator, MemoryCategory::Workspace);
  for (int64_t r = 0; r < full.rows(); ++r) {
    std::copy(full.row(r) + a_begin, full.row(r) + a_begin + half, part.row(r));
    std::copy(full.row(r) + b_begin, full.row(r) + b_begin + half, part.row(r) + half);
  }
  return part;
}

// The init rule for a [rows, 2 half] SwiGLU shard tensor: its gate half is
// columns [gate_begin, ...) and its up half [up_begin, ...) of the full one.
void init_two_column_blocks(Tensor& part, uint64_t key, double bound, int64_t full_cols,
                            int64_t gate_begin, int64_t up_begin) {
  const int64_t half = part.cols() / 2;
  Tensor gate(part.rows(), half);
  Tensor up(part.rows(), half);
  init_uniform_block(gate, key, bound, full_cols, 0, gate_begin);
  init_uniform_block(up, key, bound, full_cols, 0, up_begin);
  for (int64_t r = 0; r < part.rows(); ++r) {
    std::copy(gate.row(r), gate.row(r) + half, part.row(r));
    std::copy(up.row(r), up.row(r) + half, part.row(r) + half);
  }
}

// Resizes a cache tensor only when its shape changes. Left unfilled: every
// kernel that writes one (norms, GEMMs with beta = 0, attention, the
// activations, the gathers, copy_from) writes all of it before anything reads it.
void ensure(Tensor& t, int64_t rows, int64_t cols, DeviceAllocator* allocator) {
  if (t.rows() != rows || t.cols() != cols)
    t = Tensor::uninitialized(rows, cols, allocator, MemoryCategory::Activations);
}

// y += residual (+ bias on every row): the residual connection, after the
// row-parallel linear's all-reduce so that neither is added tp times.
void add_residual(Tensor& y, const Tensor& residual, const Tensor& bias) {
  assert(y.same_shape(residual));
  const int64_t width = y.cols();
  const bool with_bias = !bias.empty();
  for (int64_t r = 0; r < y.rows(); ++r) {
    float* __restrict__ out = y.row(r);
    const float* __restrict__ in = residual.row(r);
    if (with_bias) {
      const float* __restrict__ b = bias.data();
      for (int64_t c = 0; c < width; ++c) out[c] += in[c] + b[c];
    } else {
      for (int64_t c = 0; c < width; ++c) out[c] += in[c];
    }
  }
}

// y = residual + dropout(y + bias): the residual add, with the row-parallel
// bias and the block's dropout in between when it is active.
void bias_dropout_residual(Tensor& y, const Tensor& residual, const Tensor& bias,
                           const BlockDropout& dropout, BlockDropoutSite site, int64_t seq,
                           int64_t first_position, const int64_t* positions) {
  if (!dropout.active()) {
    add_residual(y, residual, bias);
    return;
  }
  if (!bias.empty()) add_row_vector(bias, y);
  apply_block_dropout(dropout, site, seq, y, first_position, positions);
  y.add(residual);
}

// The gradient of a dropped output from that of the sum it went into:
// `grad` through the mask into `masked`, or `grad` itself without dropout.
const Tensor& through_dropout(const Tensor& grad, const BlockDropout& dropout,
                              BlockDropoutSite site, int64_t seq, Tensor& masked,
                              DeviceAllocator* allocator, int64_t first_position,
                              const int64_t* positions) {
  if (!dropout.active()) {
    masked.reset();
    return grad;
  }
  ensure(masked, grad.rows(), grad.cols(), allocator);
  masked.copy_from(grad);
  apply_block_dropout(dropout, site, seq, masked, first_position, positions);
  return masked;
}

const Tensor* optional(const Tensor& t) { return t.empty() ? nullptr : &t; }
Tensor* optional(Tensor& t) { return t.empty() ? nullptr : &t; }

// The config, once check_gpt_block accepts it (for the constructor's initialiser list).
const GptBlockConfig& checked(const GptBlockConfig& config, const BlockShard& shard) {
  check_gpt_block(config, shard);
  return config;
}

double uniform_bound(int64_t in_features) {
  return 1.0 / std::sqrt(static_cast<double>(in_features));
}

}  // namespace

void check_block_sequence(const BlockShard& shard, int64_t seq) {
  if (shard.splits_context() && (seq <= 0 || seq % (2 * shard.cp) != 0))
    throw std::invalid_argument("Transformer block: cp = " + std::to_string(shard.cp) +
                                " cuts the sequence into 2 x cp equal chunks, but the sequence "
                                "length " +
                                std::to_string(seq) + " does not divide into " +
                                std::to_string(2 * shard.cp));
  const int64_t positions = seq / shard.cp;  // the rank's
  if (shard.splits_sequence() && positions % shard.tp != 0)
    throw std::invalid_argument("Transformer block: tp = " + std::to_string(shard.tp) +
                                " does not divide the sequence length " +
                                std::to_string(positions) + ", which sequence parallelism splits");
}

void check_gpt_block(const GptBlockConfig& config, const BlockShard& shard) {
  const auto fail = [](const std::string& message) {
    throw std::invalid_argument("Transformer block: " + message);
  };
  if (config.dim <= 0 || config.heads <= 0 || config.ffn_hidden <= 0)
    fail("dim (" + std::to_string(config.dim) + "), heads (" + std::to_string(config.heads) +
         ") and ffn_hidden (" + std::to_string(config.ffn_hidden) + ") must all be positive");
  if (config.dim % config.heads != 0)
    fail(std::to_string(config.heads) + " heads do not divide dim " + std::to_string(config.dim) +
         "; choose a head count that divides the model width");
  if (shard.tp < 1 || shard.shard < 0 || shard.shard >= shard.tp)
    fail("tensor-parallel shard " + std::to_string(shard.shard) +
         " of tp = " + std::to_string(shard.tp) + " does not exist; need 0 <= shard < tp");
  if (shard.cp < 1 || shard.context < 0 || shard.context >= shard.cp)
    fail("context-parallel rank " + std::to_string(shard.context) +
         " of cp = " + std::to_string(shard.cp) + " does not exist; need 0 <= rank < cp");
  if (config.kv_heads < 0 || config.heads % config.key_value_heads() != 0)
    fail("kv_heads = " + std::to_string(config.kv_heads) + " does not divide the " +
         std::to_string(config.heads) +
         " heads; each key/value head serves a whole group of query heads (0 means kv_heads = "
         "heads)");
  if (config.heads % shard.tp != 0)
    fail("tp = " + std::to_string(shard.tp) + " does not divide the " +
         std::to_string(config.heads) + " heads; each shard needs whole heads");
  if (config.key_value_heads() % shard.tp != 0)
    fail("tp = " + std::to_string(shard.tp) + " does not divide the " +
         std::to_string(config.key_value_heads()) +
         " key/value heads; each shard needs whole query groups (choose a tp that divides "
         "kv_heads)");
  if (config.rotary && config.head_dim() % 2 != 0)
    fail("rotary position embeddings turn pairs of a head's values, but the head width " +
         ("dim / heads = " + std::to_string(config.head_dim())) +
         " is odd; choose heads so that dim / heads is even");
  if (config.ffn_hidden % shard.tp != 0)
    fail("tp = " + std::to_string(shard.tp) + " does not divide ffn_hidden " +
         std::to_string(config.ffn_hidden) + "; choose a hidden width that tp divides");
  if (!(config.dropout >= 0.0f && config.dropout < 1.0f))
    fail("dropout must be in [0, 1), got " + std::to_string(config.dropout));
}

GptBlockTensors slice_block_tensors(GptBlockTensors& full, const GptBlockConfig& config,
                                    const BlockShard& shard, DeviceAllocator* allocator) {
  check_gpt_block(config, shard);
  const ShardWidths w = shard_widths(config, shard.tp);
  const int64_t k = shard.shard;
  const auto whole = [&](const Tensor& t) {
    return copy_slice(t, {0, t.rows(), 0, t.cols()}, allocator);
  };
  const auto columns = [&](const Tensor& t, int64_t begin, int64_t count) {
    return t.empty() ? Tensor() : copy_slice(t, {0, t.rows(), begin, count}, allocator);
  };
  const auto rows = [&](const Tensor& t, int64_t begin, int64_t count) {
    return t.empty() ? Tensor() : copy_slice(t, {begin, count, 0, t.cols()}, allocator);
  };
  const auto ffn1_part = [&](const Tensor& t) {
    if (t.empty()) return Tensor();
    if (config.activation == BlockActivation::Gelu) return columns(t, k * w.ffn, w.ffn);
    return two_column_blocks(t, k * w.ffn, config.ffn_hidden + k * w.ffn, w.ffn, allocator);
  };
  GptBlockTensors part;
  part.norm1_gain = whole(full.norm1_gain);
  part.norm1_bias = whole(full.norm1_bias);
  part.qkv_weight = columns(full.qkv_weight, k * w.qkv, w.qkv);
  part.qkv_bias = columns(full.qkv_bias, k * w.qkv, w.qkv);
  part.proj_weight = rows(full.proj_weight, k * w.attention, w.attention);
  part.proj_bias = whole(full.proj_bias);
  part.norm2_gain = whole(full.norm2_gain);
  part.norm2_bias = whole(full.norm2_bias);
  part.ffn1_weight = ffn1_part(full.ffn1_weight);
  part.ffn1_bias = ffn1_part(full.ffn1_bias);
  part.ffn2_weight = rows(full.ffn2_weight, k * w.ffn, w.ffn);
  part.ffn2_bias = whole(full.ffn2_bias);
  return part;
}

void paste_block_tensors(GptBlockTensors& full, GptBlockTensors& part,
                         const GptBlockConfig& config, const BlockShard& shard) {
  check_gpt_block(config, shard);
  const ShardWidths w = shard_widths(config, shard.tp);
  const int64_t k = shard.shard;
  // part's columns [from, from + count) into full's columns [to, ...), or rows likewise.
  const auto columns = [](Tensor& to, const Tensor& from, int64_t to_begin, int64_t from_begin,
                          int64_t count) {
    for (int64_t r = 0; r < from.rows(); ++r)
      std::copy(from.row(r) + from_begin, from.row(r) + from_begin + count, to.row(r) + to_begin);
  };
  const auto rows = [](Tensor& to, const Tensor& from, int64_t begin) {
    if (from.empty()) return;  // a block with experts holds no FFN2
    std::copy(from.data(), from.data() + from.size(), to.row(begin));
  };
  const auto whole = [](Tensor& to, const Tensor& from) {
    if (!from.empty()) to.copy_from(from);
  };
  const auto ffn1_part = [&](Tensor& to, const Tensor& from) {
    if (from.empty()) return;
    columns(to, from, k * w.ffn, 0, w.ffn);
    if (config.activation == BlockActivation::SwiGlu)  // [gate | up]
      columns(to, from, config.ffn_hidden + k * w.ffn, w.ffn, w.ffn);
  };
  whole(full.norm1_gain, part.norm1_gain);
  whole(full.norm1_bias, part.norm1_bias);
  columns(full.qkv_weight, part.qkv_weight, k * w.qkv, 0, w.qkv);
  if (!part.qkv_bias.empty()) columns(full.qkv_bias, part.qkv_bias, k * w.qkv, 0, w.qkv);
  rows(full.proj_weight, part.proj_weight, k * w.attention);
  whole(full.proj_bias, part.proj_bias);
  whole(full.norm2_gain, part.norm2_gain);
  whole(full.norm2_bias, part.norm2_bias);
  ffn1_part(full.ffn1_weight, part.ffn1_weight);
  ffn1_part(full.ffn1_bias, part.ffn1_bias);
  rows(full.ffn2_weight, part.ffn2_weight, k * w.ffn);
  whole(full.ffn2_bias, part.ffn2_bias);
}

int64_t GptBlockCache::forward_floats() const {
  return norm1_out.size() + qkv.size() + probabilities.size() + lse.size() + attention_out.size() +
         h.size() + norm2_out.size() + ffn1_out.size() + activation_out.size();
}

GptBlock::GptBlock(const GptBlockConfig& config, const BlockShard& shard,
                   DeviceAllocator* allocator)
    : config_(checked(config, shard)),
      shard_(shard),
      allocator_(allocator),
      weights_(shard_tensors(config, shard.tp, allocator, MemoryCategory::Weights)),
      gradients_(shard_tensors(config, shard.tp, allocator, MemoryCategory::Gradients)) {
  weights_.norm1_gain.fill(1.0f);
  weights_.norm2_gain.fill(1.0f);
}

void GptBlock::init(uint64_t seed, int layer) {
  const uint64_t base = layer_key(seed, RandomStream::TransformerBlock, layer);
  const auto key = [&](BlockTensor tensor) {
    return combine_key(base, static_cast<uint64_t>(tensor));
  };
  const ShardWidths w = shard_widths(config_, shard_.tp);
  const int64_t k = shard_.shard;
  const int64_t dim = config_.dim;
  const int64_t f = config_.ffn_hidden;
  GptBlockTensors& t = weights_;
  t.norm1_gain.fill(1.0f);
  t.norm1_bias.set_zero();
  t.norm2_gain.fill(1.0f);
  t.norm2_bias.set_zero();
  init_uniform_block(t.qkv_weight, key(BlockTensor::QkvWeight), uniform_bound(dim),
                     config_.qkv_width(), 0, k * w.qkv);
  init_uniform_block(t.qkv_bias, key(BlockTensor::QkvBias), uniform_bound(dim), config_.qkv_width(),
                     0, k * w.qkv);
  init_uniform_block(t.proj_weight, key(BlockTensor::ProjWeight), uniform_bound(dim), dim,
                     k * w.attention, 0);
  init_uniform_block(t.proj_bias, key(BlockTensor::ProjBias), uniform_bound(dim), dim);
  if (!config_.dense_mlp) return;
  if (config_.activation == BlockActivation::Gelu) {
    init_uniform_block(t.ffn1_weight, key(BlockTensor::Ffn1Weight), uniform_bound(dim), f, 0,
                       k * w.ffn);
    init_uniform_block(t.ffn1_bias, key(BlockTensor::Ffn1Bias), uniform_bound(dim), f, 0,
                       k * w.ffn);
  } else {
    init_two_column_blocks(t.ffn1_weight, key(BlockTensor::Ffn1Weight), uniform_bound(dim), 2 * f,
                           k * w.ffn, f + k * w.ffn);
    if (!t.ffn1_bias.empty())
      init_two_column_blocks(t.ffn1_bias, key(BlockTensor::Ffn1Bias), uniform_bound(dim), 2 * f,
                             k * w.ffn, f + k * w.ffn);
  }
  init_uniform_block(t.ffn2_weight, key(BlockTensor::Ffn2Weight), uniform_bound(f), dim, k * w.ffn,
                     0);
  init_uniform_block(t.ffn2_bias, key(BlockTensor::Ffn2Bias), uniform_bound(f), dim);
}

void GptBlock::zero_grad() {
  for (Tensor* grad : gradients_.list()) grad->set_zero();
}

AttentionShape block_attention_shape(const GptBlockConfig& config, const BlockShard& shard,
                                     int64_t batch, int64_t seq, const int64_t* positions) {
  const int64_t heads = config.heads / shard.tp;
  AttentionShape shape{batch,
                       seq,
                       heads,
                       config.head_dim(),
                       config.causal,
                       heads * shard.shard,
                       config.key_value_heads() / shard.tp};
  if (shard.splits_context()) {
    shape.queries = seq / shard.cp;
    shape.query_positions = positions;
    shape.packed_keys = true;  // only K and V travel
  }
  return shape;
}

AttentionShape GptBlock::attention_shape(int64_t batch, int64_t seq) const {
  return block_attention_shape(config_, shard_, batch, seq, global_positions(seq));
}

const int64_t* GptBlock::global_positions(int64_t seq) const {
  if (!shard_.splits_context()) return nullptr;
  if (static_cast<int64_t>(positions_.size()) != context_positions_of(seq))
    positions_ = context_positions(seq, shard_.cp, shard_.context);
  return positions_.data();
}

const RotaryTable& GptBlock::rotary_angles(int64_t seq) const {
  if (rotary_.seq != seq) rotary_ = rotary_table(seq, config_.head_dim(), config_.rotary_theta);
  return rotary_;
}

void GptBlock::norm_forward(const Tensor& gain, const Tensor& bias, const Tensor& x,
                            Tensor& y) const {
  if (config_.norm == NormType::LayerNorm)
    layer_norm_forward(x, gain, bias, y);
  else
    rms_norm_forward(x, gain, y);
}

void GptBlock::norm_backward_input(const Tensor& gain, const Tensor& x, const Tensor& dy,
                                   Tensor& dx) const {
  if (config_.norm == NormType::LayerNorm)
    layer_norm_backward_input(x, gain, dy, dx);
  else
    rms_norm_backward_input(x, gain, dy, dx);
}

void GptBlock::norm_backward_weight(const Tensor& x, const Tensor& dy, Tensor& gain_grad,
                                    Tensor& bias_grad) const {
  if (config_.norm == NormType::LayerNorm)
    layer_norm_backward_weight(x, dy, gain_grad, bias_grad);
  else
    rms_norm_backward_weight(x, dy, gain_grad);
}

SequenceSlice GptBlock::sequence_slice(int64_t batch, int64_t seq) const {
  const int64_t positions = context_positions_of(seq);
  if (!shard_.splits_sequence()) return {1, 0, batch, positions};
  return {shard_.tp, shard_.shard, batch, positions / shard_.tp};
}

const Tensor& GptBlock::whole_sequence(const Tensor& local, const SequenceSlice& slice, Tensor& whole,
                                       const BlockCollectives& collectives) const {
  if (slice.tp == 1) return local;
  ensure(whole, slice.batch * slice.positions(), local.cols(), allocator_);
  gather_sequence(local, slice, whole, collectives.sequence.all_gather, allocator_);
  return whole;
}

void GptBlock::sum_partials(Tensor& whole, const SequenceSlice& slice, Tensor& local,
                            const BlockCollectives& collectives) const {
  if (slice.tp == 1) {
    assert(&whole == &local);
    collectives.all_reduce_sum(whole.data(), whole.size());
    return;
  }
  scatter_sequence(whole, slice, local, collectives.sequence.reduce_scatter, allocator_);
}

void GptBlock::forward(const Tensor& x, int64_t batch, int64_t seq, GptBlockCache& cache, Tensor& y,
                       const BlockCollectives& collectives, const BlockDropout& dropout) const {
  assert(config_.dense_mlp);
  forward_attention(x, batch, seq, cache, collectives, dropout);
  if (!x.same_shape(y))
    throw std::invalid_argument("Transformer block: output " + std::to_string(y.rows()) + " x " +
                                std::to_string(y.cols()) + " must be shaped as the input, " +
                                std::to_string(x.rows()) + " x " + std::to_string(x.cols()));
  const SequenceSlice slice = sequence_slice(batch, seq);
  const ShardWidths w = shard_widths(config_, shard_.tp);
  const int64_t rows = batch * slice.positions();
  ensure(cache.ffn1_out, rows, w.ffn1, allocator_);
  ensure(cache.activation_out, rows, w.ffn, allocator_);
  const GptBlockTensors& t = weights_;
  Tensor whole;  // as in forward_attention

  // Feed-forward half: y = h + ffn2(act(ffn1(norm2(h)))).
  linear_forward(whole_sequence(cache.norm2_out, slice, whole, collectives), t.ffn1_weight,
                 optional(t.ffn1_bias), cache.ffn1_out);
  if (config_.activation == BlockActivation::Gelu)
    gelu_forward(cache.ffn1_out.data(), cache.activation_out.data(), cache.ffn1_out.size());
  else
    swiglu_forward(cache.ffn1_out, cache.activation_out);
  Tensor& ffn2_out = slice.tp == 1 ? y : whole;
  linear_forward(cache.activation_out, t.ffn2_weight, nullptr, ffn2_out);
  sum_partials(ffn2_out, slice, y, collectives);
  bias_dropout_residual(y, cache.h, t.ffn2_bias, dropout, BlockDropoutSite::AfterFeedForward,
                        slice.local_positions, slice.first_position(), global_positions(seq));
}

void GptBlock::forward_attention(const Tensor& x, int64_t batch, int64_t seq, GptBlockCache& cache,
                                 const BlockCollectives& collectives,
                                 const BlockDropout& dropout) const {
  const int64_t dim = config_.dim;
  check_block_sequence(shard_, seq);
  const SequenceSlice slice = sequence_slice(batch, seq);
  const int64_t rows = batch * slice.positions();
  const int64_t local_rows = batch * slice.local_positions;
  if (batch <= 0 || seq <= 0 || x.rows() != local_rows || x.cols() != dim)
    throw std::invalid_argument(
        "Transformer block: input " + std::to_string(x.rows()) + " x " + std::to_string(x.cols()) +
        " must be (batch " + std::to_string(batch) + " * positions " +
        std::to_string(slice.local_positions) + ") x dim " + std::to_string(dim));
  const ShardWidths w = shard_widths(config_, shard_.tp);
  const AttentionShape shape = attention_shape(batch, seq);
  cache.batch = batch;
  cache.seq = seq;
  cache.dropout = dropout;
  ensure(cache.norm1_out, local_rows, dim, allocator_);
  ensure(cache.qkv, rows, w.qkv, allocator_);
  // Under context parallelism the ring's attention keeps each query's
  // log-sum-exp instead of P (blockwise_attention.h).
  if (keeps_probabilities())
    ensure(cache.probabilities, shape.probability_rows(), seq, allocator_);
  else
    cache.probabilities.reset();
  if (shard_.splits_context())
    ensure(cache.lse, shape.probability_rows(), 1, allocator_);
  else
    cache.lse.reset();
  ensure(cache.attention_out, rows, w.attention, allocator_);
  ensure(cache.h, local_rows, dim, allocator_);
  ensure(cache.norm2_out, local_rows, dim, allocator_);
  const GptBlockTensors& t = weights_;
  // Sequence parallelism's whole-sequence values (gathered inputs, partial
  // outputs) live only while this forward runs.
  Tensor whole;

  // Attention half: h = x + proj(attention(qkv(norm1(x)))).
  norm_forward(t.norm1_gain, t.norm1_bias, x, cache.norm1_out);
  linear_forward(whole_sequence(cache.norm1_out, slice, whole, collectives), t.qkv_weight,
                 optional(t.qkv_bias), cache.qkv);
  if (config_.rotary) rotary_forward(cache.qkv, shape, rotary_angles(seq));
  if (shard_.splits_context()) {
    ring_attention_forward(cache, shape, collectives.context, dropout);
  } else {
    Tensor* probabilities = keeps_probabilities() ? &cache.probabilities : nullptr;
    attention_forward(cache.qkv, shape, cache.attention_out, probabilities, &dropout);
  }
  Tensor& proj_out = slice.tp == 1 ? cache.h : whole;
  linear_forward(cache.attention_out, t.proj_weight, nullptr, proj_out);
  sum_partials(proj_out, slice, cache.h, collectives);
  bias_dropout_residual(cache.h, x, t.proj_bias, dropout, BlockDropoutSite::AfterProjection,
                        slice.local_positions, slice.first_position(), global_positions(seq));
  norm_forward(t.norm2_gain, t.norm2_bias, cache.h, cache.norm2_out);
}

namespace {

// Rank `rank`'s slot of a rank-major buffer of every rank's packed keys (or
// their gradients), [cp][batch][positions][key_width]: its rows as a view.
Tensor rank_slot(Tensor& ranks, int cp, int rank) {
  const int64_t rows = ranks.rows() / cp;
  Tensor slot = Tensor::borrow(ranks.row(rank * rows), rows * ranks.cols());
  slot.reshape(rows, ranks.cols());
  return slot;
}

}  // namespace

void GptBlock::ring_attention_forward(GptBlockCache& cache, const AttentionShape& shape,
                                      const ContextCollectives& context,
                                      const BlockDropout& dropout) const {
  // Every rank's packed keys and values, rank-major, for this forward only:
  // this rank writes its own; the ring brings the others, and each is
  // merged into the queries' running softmax as it lands.
  Tensor ranks = Tensor::uninitialized(shape.key_rows(), shape.key_width(), allocator_,
                                       MemoryCategory::Activations);
  Tensor own = rank_slot(ranks, shard_.cp, shard_.context);
  pack_keys(cache.qkv, shape, own);
  BlockwiseAttentionForward attention(cache.qkv, shape, &dropout);
  context.all_gather(ranks.data(), ranks.size(), [&](int rank) {
    const std::vector<int64_t> positions = context_positions(cache.seq, shard_.cp, rank);
    const Tensor keys = rank_slot(ranks, shard_.cp, rank);
    attention.add({&keys, positions.data(), static_cast<int64_t>(positions.size())});
  });
  attention.finish(cache.attention_out, cache.lse);
}

void GptBlock::ring_attention_backward(GptBlockCache& cache,
                                       const ContextCollectives& context) const {
  // The keys and values come round again; as each lands this rank adds its
  // queries' dq and writes that block's dk and dv into the block's slot, and
  // the reduce-scatter then sums every slot at home, where it joins dq.
  const AttentionShape shape = attention_shape(cache.batch, cache.seq);
  Tensor ranks = Tensor::uninitialized(shape.key_rows(), shape.key_width(), allocator_,
                                       MemoryCategory::Activations);
  Tensor key_grads = Tensor::uninitialized(shape.key_rows(), shape.key_width(), allocator_,
                                           MemoryCategory::Activations);
  Tensor own = rank_slot(ranks, shard_.cp, shard_.context);
  pack_keys(cache.qkv, shape, own);
  cache.d_qkv.set_zero();
  const BlockwiseAttentionGradient input{
      &cache.qkv, &cache.attention_out, &cache.lse, &cache.d_attention_out, shape, &cache.dropout};
  context.all_gather(ranks.data(), ranks.size(), [&](int rank) {
    const std::vector<int64_t> positions = context_positions(cache.seq, shard_.cp, rank);
    const Tensor keys = rank_slot(ranks, shard_.cp, rank);
    Tensor grads = rank_slot(key_grads, shard_.cp, rank);
    blockwise_attention_backward(input,
                                 {&keys, positions.data(), static_cast<int64_t>(positions.size())},
                                 cache.d_qkv, grads);
  });
  ranks.reset();
  context.reduce_scatter(key_grads.data(), key_grads.size());
  unpack_keys(rank_slot(key_grads, shard_.cp, shard_.context), shape, cache.d_qkv);
}

const Tensor& GptBlock::output_gradient(const Tensor& grad, BlockDropoutSite site,
                                        GptBlockCache& cache, Tensor& kept,
                                        const BlockCollectives& collectives) const {
  const SequenceSlice slice = sequence_slice(cache.batch, cache.seq);
  const int64_t* positions = global_positions(cache.seq);
  if (slice.tp == 1)
    return through_dropout(grad, cache.dropout, site, slice.local_positions, kept, allocator_, 0,
                           positions);
  Tensor masked;
  const Tensor& local = through_dropout(grad, cache.dropout, site, slice.local_positions, masked,
                                        allocator_, slice.first_position(), positions);
  whole_sequence(local, slice, kept, collectives);  // gathers into kept (tp > 1)
  return kept;
}

void GptBlock::backward_input(const Tensor& x, const Tensor& dy, GptBlockCache& cache, Tensor& dx,
                              const BlockCollectives& collectives) const {
  assert(config_.dense_mlp);
  const SequenceSlice slice = sequence_slice(cache.batch, cache.seq);
  const bool split = slice.tp > 1;
  const int64_t rows = cache.batch * slice.positions();
  const int64_t local_rows = cache.batch * slice.local_positions;
  const int64_t dim = config_.dim;
  assert(x.rows() == local_rows && x.cols() == dim && x.same_shape(dy) && x.same_shape(dx));
  assert(cache.h.rows() == local_rows);
  const ShardWidths w = shard_widths(config_, shard_.tp);
  ensure(cache.d_activation_out, rows, w.ffn, allocator_);
  ensure(cache.d_ffn1_out, rows, w.ffn1, allocator_);
  ensure(cache.d_norm2_out, local_rows, dim, allocator_);
  const GptBlockTensors& t = weights_;
  Tensor partial;  // a norm output's gradient before the sum over shards (split only)

  // Feed-forward half, back to dnorm2_out.
  const Tensor& d_ffn2_out =
      output_gradient(dy, BlockDropoutSite::AfterFeedForward, cache, cache.d_ffn2_out, collectives);
  linear_backward_input(d_ffn2_out, t.ffn2_weight, cache.d_activation_out);
  if (config_.activation == BlockActivation::Gelu)
    gelu_backward(cache.ffn1_out.data(), cache.d_activation_out.data(), cache.d_ffn1_out.data(),
                  cache.ffn1_out.size());
  else
    swiglu_backward(cache.ffn1_out, cache.d_activation_out, cache.d_ffn1_out);
  if (split) ensure(partial, rows, dim, allocator_);
  Tensor& d_norm2_partial = split ? partial : cache.d_norm2_out;
  linear_backward_input(cache.d_ffn1_out, t.ffn1_weight, d_norm2_partial);
  sum_partials(d_norm2_partial, slice, cache.d_norm2_out, collectives);
  if (split) whole_sequence(cache.norm2_out, slice, cache.norm2_gathered, collectives);
  partial.reset();  // backward_attention takes its own
  backward_attention(x, dy, cache, dx, collectives);
}

void GptBlock::backward_attention(const Tensor& x, const Tensor& dy, GptBlockCache& cache,
                                  Tensor& dx, const BlockCollectives& collectives) const {
  const SequenceSlice slice = sequence_slice(cache.batch, cache.seq);
  const bool split = slice.tp > 1;
  const int64_t rows = cache.batch * slice.positions();
  const int64_t local_rows = cache.batch * slice.local_positions;
  const int64_t dim = config_.dim;
  assert(cache.d_norm2_out.rows() == local_rows && x.same_shape(dx));
  const ShardWidths w = shard_widths(config_, shard_.tp);
  ensure(cache.d_h, local_rows, dim, allocator_);
  ensure(cache.d_attention_out, rows, w.attention, allocator_);
  ensure(cache.d_qkv, rows, w.qkv, allocator_);
  ensure(cache.d_norm1_out, local_rows, dim, allocator_);
  const GptBlockTensors& t = weights_;
  Tensor partial;
  if (split) ensure(partial, rows, dim, allocator_);

  // dh = dy + norm2'(dnorm2_out).
  norm_backward_input(t.norm2_gain, cache.h, cache.d_norm2_out, cache.d_h);
  cache.d_h.add(dy);

  // Attention half, back to dx = dh + norm1'(dnorm1_out).
  const Tensor& d_proj_out = output_gradient(cache.d_h, BlockDropoutSite::AfterProjection, cache,
                                             cache.d_proj_out, collectives);
  linear_backward_input(d_proj_out, t.proj_weight, cache.d_attention_out);
  if (shard_.splits_context()) {
    ring_attention_backward(cache, collectives.context);
  } else {
    const Tensor* probabilities = keeps_probabilities() ? &cache.probabilities : nullptr;
    attention_backward(cache.qkv, probabilities, cache.d_attention_out,
                       attention_shape(cache.batch, cache.seq), cache.d_qkv, &cache.dropout);
  }
  if (config_.rotary)
    rotary_backward(cache.d_qkv, attention_shape(cache.batch, cache.seq), rotary_angles(cache.seq));
  Tensor& d_norm1_partial = split ? partial : cache.d_norm1_out;
  linear_backward_input(cache.d_qkv, t.qkv_weight, d_norm1_partial);
  sum_partials(d_norm1_partial, slice, cache.d_norm1_out, collectives);
  if (split) whole_sequence(cache.norm1_out, slice, cache.norm1_gathered, collectives);
  norm_backward_input(t.norm1_gain, x, cache.d_norm1_out, dx);
  dx.add(cache.d_h);
}

void GptBlock::backward_weight(const Tensor& x, const Tensor& dy, const GptBlockCache& cache) {
  assert(cache.d_h.same_shape(dy) && x.same_shape(dy));
  GptBlockTensors& g = gradients_;
  const bool split = shard_.splits_sequence();
  const Tensor& d_proj_out = cache.d_proj_out.empty() ? cache.d_h : cache.d_proj_out;
  if (config_.dense_mlp) {
    const Tensor& d_ffn2_out = cache.d_ffn2_out.empty() ? dy : cache.d_ffn2_out;
    linear_backward_weight(cache.activation_out, d_ffn2_out, g.ffn2_weight, optional(g.ffn2_bias));
    linear_backward_weight(split ? cache.norm2_gathered : cache.norm2_out, cache.d_ffn1_out,
                           g.ffn1_weight, optional(g.ffn1_bias));
  }
  norm_backward_weight(cache.h, cache.d_norm2_out, g.norm2_gain, g.norm2_bias);
  linear_backward_weight(cache.attention_out, d_proj_out, g.proj_weight, optional(g.proj_bias));
  linear_backward_weight(split ? cache.norm1_gathered : cache.norm1_out, cache.d_qkv,
                         g.qkv_weight, optional(g.qkv_bias));
  norm_backward_weight(x, cache.d_norm1_out, g.norm1_gain, g.norm1_bias);
}

std::vector<Tensor*> GptBlock::sequence_partial_gradients() {
  if (!shard_.splits_sequence()) return {};
  std::vector<Tensor*> partial;
  for (Tensor* t : {&gradients_.norm1_gain, &gradients_.norm1_bias, &gradients_.norm2_gain,
                    &gradients_.norm2_bias})
    if (!t->empty()) partial.push_back(t);
  return partial;
}

}  // namespace pipelab
