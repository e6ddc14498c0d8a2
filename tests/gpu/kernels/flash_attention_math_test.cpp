// Host-only checks (no GPU needed) of fused attention's arithmetic
// (flash_attention_math.h): the forward, dQ and dK/dV loops run here as the
// kernels in flash_attention.cu run them (a thread's row at a time, keys or
// queries in ascending order, the same calls), and are compared with
// core/nn's attention forward and backward, which materialise P, on the
// layout gpu/layers/attention.h gives the kernels.
#include "gpu/kernels/flash_attention_math.h"
#include "gpu/layers/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/nn/attention.h"
#include "core/nn/block_dropout.h"
#include "core/nn/counter_rng.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

using flash_math::FlashInput;
using flash_math::FlashLayout;
using testing::random_tensor;

BlockDropoutKey key_of(const BlockDropout& dropout) {
  BlockDropoutKey key;
  key.layer_key = layer_key(dropout.seed, RandomStream::Dropout, dropout.layer);
  key.step = dropout.step;
  key.first_sample = dropout.first_sample;
  key.p = dropout.p;
  key.scale = dropout.scale();
  return key;
}

// The forward kernel's work for every query row: out and lse.
template <int D>
void fused_forward(const FlashInput& qkv, const FlashLayout& at, const BlockDropoutKey& dropout,
                   std::vector<float>& out, std::vector<float>& lse) {
  out.assign(static_cast<size_t>(at.batch * at.seq * at.width()), 0.0f);
  lse.assign(static_cast<size_t>(at.batch * at.heads * at.seq), 0.0f);
  float k[D], v[D];
  for (int64_t b = 0; b < at.batch; ++b)
    for (int64_t h = 0; h < at.heads; ++h)
      for (int64_t i = 0; i < at.seq; ++i) {
        float q[D];
        for (int c = 0; c < D; ++c) q[c] = qkv[at.qkv_at(b, i, at.q_column(h) + c)];
        flash_math::ForwardRow<D> row;
        const int64_t k_column = at.k_column_of_group(h / at.group);
        for (int64_t j = 0; j < at.visible_keys(i); ++j) {
          for (int c = 0; c < D; ++c) {
            k[c] = qkv[at.qkv_at(b, j, k_column + c)];
            v[c] = qkv[at.qkv_at(b, j, k_column + D + c)];
          }
          flash_math::fold_key<D>(row, q, k, v, at.scale,
                                  flash_math::dropout_weight(dropout, at, b, h, i, j));
        }
        lse[static_cast<size_t>(at.row_at(b, h, i))] = flash_math::finish_row<D>(row);
        for (int c = 0; c < D; ++c) out[static_cast<size_t>(at.out_at(b, i, h) + c)] = row.out[c];
      }
}

// The two backward kernels' work: dq (with D_i) per query row, then dk and
// dv per key row over the group's heads.
template <int D>
void fused_backward(const FlashInput& qkv, const std::vector<float>& dout,
                    const std::vector<float>& lse, const FlashLayout& at,
                    const BlockDropoutKey& dropout, std::vector<float>& dqkv) {
  dqkv.assign(static_cast<size_t>(at.batch * at.seq * at.qkv_width()), -7.0f);  // all overwritten
  std::vector<float> row_dots(lse.size());
  const auto load = [&](float* to, int64_t b, int64_t position, int64_t column) {
    for (int c = 0; c < D; ++c) to[c] = qkv[at.qkv_at(b, position, column + c)];
  };
  float k[D], v[D], q[D], d_out[D];
  for (int64_t b = 0; b < at.batch; ++b)
    for (int64_t h = 0; h < at.heads; ++h)
      for (int64_t i = 0; i < at.seq; ++i) {
        load(q, b, i, at.q_column(h));
        for (int c = 0; c < D; ++c) d_out[c] = dout[static_cast<size_t>(at.out_at(b, i, h) + c)];
        const float row_lse = lse[static_cast<size_t>(at.row_at(b, h, i))];
        const int64_t k_column = at.k_column_of_group(h / at.group);
        float row_dot = 0.0f, dq[D] = {};
        for (int pass = 0; pass < 2; ++pass)
          for (int64_t j = 0; j < at.visible_keys(i); ++j) {
            load(k, b, j, k_column);
            load(v, b, j, k_column + D);
            const float p = flash_math::probability<D>(q, k, at.scale, row_lse);
            const float w = flash_math::dropout_weight(dropout, at, b, h, i, j);
            if (pass == 0)
              row_dot += flash_math::row_dot_term<D>(p, w, d_out, v);
            else
              flash_math::add_scaled<D>(dq, flash_math::score_gradient<D>(p, w, d_out, v, row_dot),
                                        k);
          }
        for (int c = 0; c < D; ++c)
          dqkv[static_cast<size_t>(at.qkv_at(b, i, at.q_column(h) + c))] = dq[c] * at.scale;
        row_dots[static_cast<size_t>(at.row_at(b, h, i))] = row_dot;
      }
  for (int64_t b = 0; b < at.batch; ++b)
    for (int64_t g = 0; g < at.kv_heads(); ++g)
      for (int64_t j = 0; j < at.seq; ++j) {
        const int64_t k_column = at.k_column_of_group(g);
        load(k, b, j, k_column);
        load(v, b, j, k_column + D);
        float dk[D] = {}, dv[D] = {};
        for (int64_t r = 0; r < at.group; ++r) {
          const int64_t h = g * at.group + r;
          for (int64_t i = at.first_query_seeing(j); i < at.seq; ++i) {
            load(q, b, i, at.q_column(h));
            for (int c = 0; c < D; ++c)
              d_out[c] = dout[static_cast<size_t>(at.out_at(b, i, h) + c)];
            const size_t row = static_cast<size_t>(at.row_at(b, h, i));
            const float p = flash_math::probability<D>(q, k, at.scale, lse[row]);
            const float w = flash_math::dropout_weight(dropout, at, b, h, i, j);
            flash_math::add_scaled<D>(dv, p * w, d_out);
            flash_math::add_scaled<D>(
                dk, flash_math::score_gradient<D>(p, w, d_out, v, row_dots[row]), q);
          }
        }
        for (int c = 0; c < D; ++c) {
          dqkv[static_cast<size_t>(at.qkv_at(b, j, k_column + c))] = dk[c] * at.scale;
          dqkv[static_cast<size_t>(at.qkv_at(b, j, k_column + D + c))] = dv[c];
        }
      }
}

struct FlashCase {
  const char* name;
  int64_t heads, kv_heads;
  bool causal;
  float dropout;
};

template <int D>
void expect_fused_matches_core(const FlashCase& c) {
  AttentionShape shape;
  shape.batch = 2;
  shape.seq = 13;  // not a multiple of any tile
  shape.heads = c.heads;
  shape.kv_heads = c.kv_heads;
  shape.head_dim = D;
  shape.causal = c.causal;
  shape.first_head = 2;  // a tensor-parallel shard's heads: keys the dropout masks
  BlockDropout dropout;
  dropout.p = c.dropout;
  dropout.seed = 5;
  dropout.layer = 3;
  dropout.step = 2;
  dropout.first_sample = 4;
  const Tensor qkv = random_tensor(shape.rows(), shape.qkv_width(), 11, 1.5f);
  const Tensor dout = random_tensor(shape.rows(), shape.width(), 12, 1.0f);

  Tensor out(shape.rows(), shape.width()), dqkv(shape.rows(), shape.qkv_width());
  attention_forward(qkv, shape, out, nullptr, &dropout);
  attention_backward(qkv, nullptr, dout, shape, dqkv, &dropout);

  const FlashLayout at = flash_layout(shape);
  const BlockDropoutKey key = key_of(dropout);
  const FlashInput input{qkv.data(), nullptr};
  std::vector<float> fused_out, lse, fused_dqkv;
  fused_forward<D>(input, at, key, fused_out, lse);
  fused_backward<D>(input, std::vector<float>(dout.data(), dout.data() + dout.size()), lse, at, key,
                    fused_dqkv);
  for (int64_t e = 0; e < out.size(); ++e)
    ASSERT_NEAR(fused_out[static_cast<size_t>(e)], out.data()[e],
                2e-5f * (1 + std::fabs(out.data()[e])))
        << c.name << " out " << e;
  for (int64_t e = 0; e < dqkv.size(); ++e)
    ASSERT_NEAR(fused_dqkv[static_cast<size_t>(e)], dqkv.data()[e],
                5e-5f * (1 + std::fabs(dqkv.data()[e])))
        << c.name << " dqkv row " << e / shape.qkv_width() << " column " << e % shape.qkv_width();
}

const FlashCase kCases[] = {
    {"causal", 4, 0, true, 0.0f},
    {"not causal", 4, 0, false, 0.0f},
    {"grouped 4 over 2, causal", 4, 2, true, 0.0f},
    {"multi-query, not causal", 4, 1, false, 0.0f},
    {"dropout, causal", 4, 0, true, 0.25f},
    {"dropout, grouped, not causal", 4, 2, false, 0.4f},
};

TEST(FlashAttentionMathTest, FusedLoopsMatchCoreAttentionAtEachHeadWidth) {
  for (const FlashCase& c : kCases) {
    expect_fused_matches_core<8>(c);
    expect_fused_matches_core<16>(c);
    expect_fused_matches_core<32>(c);
    expect_fused_matches_core<64>(c);
  }
}

// lse is the log of the row's softmax denominator: exp(s_ij - lse_i) is P's row.
TEST(FlashAttentionMathTest, LogSumExpGivesTheProbabilities) {
  AttentionShape shape;
  shape.batch = 1;
  shape.seq = 9;
  shape.heads = 2;
  shape.head_dim = 8;
  shape.causal = true;
  const Tensor qkv = random_tensor(shape.rows(), shape.qkv_width(), 3, 2.0f);
  Tensor probabilities(shape.probability_rows(), shape.seq);
  attention_probabilities(qkv, shape, probabilities);
  const FlashLayout at = flash_layout(shape);
  std::vector<float> out, lse;
  fused_forward<8>({qkv.data(), nullptr}, at, BlockDropoutKey{}, out, lse);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < shape.seq; ++i) {
      float q[8], k[8];
      for (int c = 0; c < 8; ++c) q[c] = qkv.data()[at.qkv_at(0, i, at.q_column(h) + c)];
      for (int64_t j = 0; j < shape.seq; ++j) {
        for (int c = 0; c < 8; ++c) k[c] = qkv.data()[at.qkv_at(0, j, at.k_column_of_group(h) + c)];
        const float expected = probabilities.row(at.row_at(0, h, i))[j];
        const float p =
            j <= i ? flash_math::probability<8>(q, k, at.scale, lse[at.row_at(0, h, i)]) : 0.0f;
        EXPECT_NEAR(p, expected, 1e-6f) << h << " " << i << " " << j;
      }
    }
}

// A bf16 operand reads as its float value.
TEST(FlashAttentionMathTest, Bf16InputsReadAsTheirValues) {
  const std::vector<float> values = {1.5f, -0.25f, 3.0f};
  std::vector<uint16_t> bits;
  for (float v : values) bits.push_back(bf16_math::to_bf16_bits(v));
  const FlashInput input{nullptr, bits.data()};
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(input[static_cast<int64_t>(i)], values[i]);
}

}  // namespace
}  // namespace pipelab::gpu
