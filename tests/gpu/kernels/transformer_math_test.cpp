// Host-only checks (no GPU needed) of the Transformer kernels' shared formulas
// (rms_norm_math.h, swiglu_math.h, embedding_math.h, attention_math.h,
// block_dropout_math.h, token_loss_math.h, rotary_math.h): each is run here the way its
// kernel runs it, row by row, and compared with core/nn's CPU layer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/nn/attention.h"
#include "core/nn/block_dropout.h"
#include "core/nn/context_split.h"
#include "core/nn/counter_rng.h"
#include "core/nn/embedding.h"
#include "core/nn/rms_norm.h"
#include "core/nn/rotary.h"
#include "core/nn/swiglu.h"
#include "core/nn/token_cross_entropy.h"
#include "gpu/kernels/attention_math.h"
#include "gpu/kernels/block_dropout_math.h"
#include "gpu/kernels/embedding_math.h"
#include "gpu/kernels/rms_norm_math.h"
#include "gpu/kernels/rotary_math.h"
#include "gpu/kernels/swiglu_math.h"
#include "gpu/kernels/token_loss_math.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

using testing::expect_close;
using testing::expect_close_to_scale;
using testing::random_tensor;

std::vector<float> values(const Tensor& t) { return {t.data(), t.data() + t.size()}; }

TEST(TransformerMathTest, RmsNormMatchesCore) {
  const int64_t rows = 7, width = 37;
  const Tensor x = random_tensor(rows, width, 1, 2.0);
  const Tensor gain = random_tensor(1, width, 2);
  const Tensor dy = random_tensor(rows, width, 3);
  Tensor y(rows, width), dx(rows, width), dgain(1, width);
  rms_norm_forward(x, gain, y);
  rms_norm_backward_input(x, gain, dy, dx);
  rms_norm_backward_weight(x, dy, dgain);

  std::vector<float> y_port, dx_port, dgain_port(width, 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x.row(r);
    const float* grad = dy.row(r);
    double squares = 0;
    for (int64_t c = 0; c < width; ++c) squares += static_cast<double>(in[c]) * in[c];
    const float inverse = rms_norm_math::inverse_rms(squares, width);
    double dot = 0;
    for (int64_t c = 0; c < width; ++c)
      dot += rms_norm_math::gradient_dot_term(in[c], grad[c], gain.data()[c], inverse);
    const float mean_dot = static_cast<float>(dot / static_cast<double>(width));
    for (int64_t c = 0; c < width; ++c) {
      y_port.push_back(rms_norm_math::value(in[c], inverse, gain.data()[c]));
      dx_port.push_back(
          rms_norm_math::input_gradient(in[c], grad[c], gain.data()[c], inverse, mean_dot));
      dgain_port[c] += rms_norm_math::gain_gradient(in[c], grad[c], inverse);
    }
  }
  expect_close(y_port, values(y), 1e-6, 1e-6, "rmsnorm forward");
  expect_close_to_scale(dx_port, values(dx), 1e-5, "rmsnorm input gradient");
  expect_close_to_scale(dgain_port, values(dgain), 1e-5, "rmsnorm gain gradient");
}

TEST(TransformerMathTest, SwiGluMatchesCore) {
  const int64_t rows = 5, half = 19;
  const Tensor x = random_tensor(rows, 2 * half, 4, 4.0);
  const Tensor dy = random_tensor(rows, half, 5);
  Tensor y(rows, half), dx(rows, 2 * half);
  swiglu_forward(x, y);
  swiglu_backward(x, dy, dx);
  std::vector<float> y_port, dx_port(static_cast<size_t>(dx.size()));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < half; ++c) {
      const float g = x.row(r)[c];
      const float u = x.row(r)[half + c];
      const float grad = dy.row(r)[c];
      y_port.push_back(swiglu_math::value(g, u));
      dx_port[r * 2 * half + c] = swiglu_math::gate_gradient(g, u, grad);
      dx_port[r * 2 * half + half + c] = swiglu_math::up_gradient(g, grad);
    }
  expect_close(y_port, values(y), 1e-6, 1e-7, "swiglu forward");
  expect_close(dx_port, values(dx), 1e-6, 1e-7, "swiglu backward");
}

TEST(TransformerMathTest, EmbeddingShardLookupMatchesCore) {
  const int64_t vocab = 12, dim = 3, seq = 4;
  const std::vector<int32_t> ids = {0, 5, 6, 11, 7, 3, 6, 6};  // two sequences
  const VocabRange range = vocab_shard(vocab, 2, 1);           // rows [6, 12)
  const Tensor table = random_tensor(range.rows, dim, 6);
  const Tensor positions = random_tensor(seq, dim, 7);
  const Tensor dy = random_tensor(static_cast<int64_t>(ids.size()), dim, 8);
  Tensor y(static_cast<int64_t>(ids.size()), dim);
  Tensor table_grad(range.rows, dim), position_grad(seq, dim);
  token_embedding_forward(ids, table, range, y);
  add_position_embedding(positions, seq, y);
  token_embedding_backward(ids, dy, range, table_grad);
  position_embedding_backward(dy, seq, position_grad);

  std::vector<float> y_port;
  std::vector<float> table_port(static_cast<size_t>(table.size()), 0.0f);
  std::vector<float> position_port(static_cast<size_t>(positions.size()), 0.0f);
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t row =
        embedding_math::table_row(static_cast<float>(ids[i]), range.begin, range.rows);
    const int64_t t = embedding_math::position_of(static_cast<int64_t>(i), seq);
    for (int64_t c = 0; c < dim; ++c) {
      const float token = row >= 0 ? table.row(row)[c] : 0.0f;
      y_port.push_back(token + positions.row(t)[c]);
      if (row >= 0) table_port[row * dim + c] += dy.row(static_cast<int64_t>(i))[c];
      position_port[t * dim + c] += dy.row(static_cast<int64_t>(i))[c];
    }
  }
  EXPECT_EQ(y_port, values(y));
  EXPECT_EQ(table_port, values(table_grad));
  EXPECT_EQ(position_port, values(position_grad));
  // Ids that are not whole numbers in range look up nothing.
  EXPECT_EQ(embedding_math::table_row(-1.0f, 0, 10), -1);
  EXPECT_EQ(embedding_math::table_row(2.5f, 0, 10), -1);
  EXPECT_EQ(embedding_math::table_row(10.0f, 0, 10), -1);
}

// The kernel's softmax (scaled scores, max, exp, double sum) against
// core/nn's probabilities, causal and not.
TEST(TransformerMathTest, ScaledMaskedSoftmaxMatchesCoreAttention) {
  for (bool causal : {true, false}) {
    const AttentionShape shape{2, 5, 3, 4, causal, 0};
    const Tensor qkv = random_tensor(shape.rows(), shape.qkv_width(), 9, 2.0);
    Tensor expected(shape.probability_rows(), shape.seq);
    attention_probabilities(qkv, shape, expected);
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape.head_dim)));
    std::vector<float> port;
    for (int64_t b = 0; b < shape.batch; ++b)
      for (int64_t h = 0; h < shape.heads; ++h)
        for (int64_t i = 0; i < shape.seq; ++i) {
          std::vector<float> scores(static_cast<size_t>(shape.seq));
          for (int64_t j = 0; j < shape.seq; ++j) {
            float dot = 0;
            for (int64_t d = 0; d < shape.head_dim; ++d)
              dot += qkv.row(b * shape.seq + i)[3 * h * shape.head_dim + d] *
                     qkv.row(b * shape.seq + j)[(3 * h + 1) * shape.head_dim + d];
            scores[j] = dot;
          }
          const int64_t visible = attention_math::visible_keys(i, shape.seq, causal);
          float max_score = -INFINITY;
          for (int64_t j = 0; j < visible; ++j) max_score = std::fmax(max_score, scores[j] * scale);
          double sum = 0;
          for (int64_t j = 0; j < visible; ++j) {
            scores[j] = attention_math::exp_shifted(scores[j] * scale, max_score);
            sum += scores[j];
          }
          const float inverse = static_cast<float>(1.0 / sum);
          for (int64_t j = 0; j < shape.seq; ++j) port.push_back(j < visible ? scores[j] * inverse : 0.0f);
        }
    expect_close(port, values(expected), 1e-5, 1e-6, causal ? "causal softmax" : "softmax");
  }
}

// ds = p (dp - p . dp) is the softmax's backward: against a finite difference.
TEST(TransformerMathTest, SoftmaxGradientMatchesFiniteDifferences) {
  const std::vector<double> s = {0.3, -1.2, 0.7, 2.0};
  const std::vector<double> dp = {0.5, -0.25, 1.5, -1.0};
  const auto softmax = [](std::vector<double> z) {
    double sum = 0;
    for (double& v : z) sum += (v = std::exp(v));
    for (double& v : z) v /= sum;
    return z;
  };
  const std::vector<double> p = softmax(s);
  double dot = 0;
  for (size_t j = 0; j < p.size(); ++j) dot += p[j] * dp[j];
  for (size_t k = 0; k < s.size(); ++k) {
    std::vector<double> plus = s, minus = s;
    plus[k] += 1e-5;
    minus[k] -= 1e-5;
    const std::vector<double> pp = softmax(plus), pm = softmax(minus);
    double numeric = 0;
    for (size_t j = 0; j < p.size(); ++j) numeric += (pp[j] - pm[j]) / 2e-5 * dp[j];
    const float analytic = attention_math::softmax_gradient(
        static_cast<float>(p[k]), static_cast<float>(dp[k]), static_cast<float>(dot));
    EXPECT_NEAR(analytic, numeric, 1e-5) << k;
  }
}

// The kernels' key of core's block dropout.
BlockDropoutKey key_of(const BlockDropout& dropout) {
  BlockDropoutKey key;
  key.layer_key = layer_key(dropout.seed, RandomStream::Dropout, dropout.layer);
  key.step = dropout.step;
  key.first_sample = dropout.first_sample;
  key.p = dropout.p;
  return key;
}

TEST(TransformerMathTest, BlockDropoutKeysMatchCore) {
  BlockDropout dropout;
  dropout.p = 0.3f;
  dropout.seed = 17;
  dropout.layer = 4;
  dropout.step = 9;
  dropout.first_sample = 6;
  const BlockDropoutKey key = key_of(dropout);
  for (int64_t sample = 0; sample < 3; ++sample)
    for (BlockDropoutSite site : {BlockDropoutSite::AttentionProbabilities,
                                  BlockDropoutSite::AfterProjection,
                                  BlockDropoutSite::AfterFeedForward}) {
      const uint64_t core_key = dropout.site_key(sample, site);
      ASSERT_EQ(block_site_key(key, sample, static_cast<uint64_t>(site)), core_key);
      for (int64_t e = 0; e < 500; ++e)
        ASSERT_EQ(block_keeps(core_key, e, key.p), dropout.keeps(core_key, e)) << e;
    }
  // The attention mask's element numbering: head 2 of the whole block.
  const int64_t seq = 6, head = 2;
  std::vector<float> ones(seq * seq, 1.0f), masked(seq * seq);
  apply_attention_dropout(dropout, 1, head, seq, ones.data(), masked.data());
  const uint64_t site = block_site_key(key, 1, 1);
  for (int64_t i = 0; i < seq; ++i)
    for (int64_t j = 0; j < seq; ++j)
      EXPECT_EQ(masked[i * seq + j] != 0.0f,
                block_keeps(site, attention_math::dropout_element(head, i, j, seq), key.p));
  // A residual site on a sequence-parallel slice: positions [3, 6) of 2 samples.
  const int64_t dim = 4, first_position = 3, positions = 3;
  Tensor slice(2 * positions, dim);
  slice.fill(1.0f);
  apply_block_dropout(dropout, BlockDropoutSite::AfterFeedForward, positions, slice, first_position);
  for (int64_t sample = 0; sample < 2; ++sample) {
    const uint64_t feed_forward = block_site_key(key, sample, 3);
    for (int64_t within = 0; within < positions * dim; ++within)
      EXPECT_EQ(slice.data()[sample * positions * dim + within] != 0.0f,
                block_keeps(feed_forward, residual_dropout_element(first_position, dim, within), key.p))
          << sample << " " << within;
  }
}

// Context parallelism: the kernels find each row's query, its causal mask and
// its dropout keys by the rank's global positions (attention_math::QueryRows,
// residual_dropout_element's positions), as core's context-parallel
// attention and block dropout do. Rank 0 of cp 2 holds positions 0, 1, 6, 7
// of 8.
TEST(TransformerMathTest, ContextParallelRowsFollowTheGlobalPositions) {
  const int64_t seq = 8;
  const std::vector<int64_t> positions = context_positions(seq, 2, 0);
  ASSERT_EQ(positions, (std::vector<int64_t>{0, 1, 6, 7}));
  const int64_t queries = static_cast<int64_t>(positions.size());
  const attention_math::QueryRows rows{queries, positions.data()};

  // The mask: core's P is zero exactly past each query's visible keys.
  AttentionShape shape{2, seq, 2, 4, true, 0};
  shape.queries = queries;
  shape.query_positions = positions.data();
  shape.packed_keys = true;
  const Tensor query_qkv = random_tensor(shape.rows(), shape.qkv_width(), 21, 2.0);
  const Tensor keys = random_tensor(shape.key_rows(), shape.key_width(), 22, 2.0);
  Tensor out(shape.rows(), shape.width()), p(shape.probability_rows(), seq);
  attention_forward(query_qkv, keys, shape, out, &p);
  for (int64_t row = 0; row < shape.probability_rows(); ++row) {
    const int64_t visible =
        attention_math::visible_keys(attention_math::query_position(row, seq, rows), seq, true);
    for (int64_t j = 0; j < seq; ++j)
      EXPECT_EQ(p.row(row)[j] != 0.0f, j < visible) << "row " << row << " key " << j;
  }
  // Without positions the rows are every position in order.
  EXPECT_EQ(attention_math::query_position(11, seq, {}), 3);

  BlockDropout dropout;
  dropout.p = 0.4f;
  dropout.seed = 3;
  dropout.layer = 2;
  dropout.step = 5;
  dropout.first_sample = 4;
  const BlockDropoutKey key = key_of(dropout);
  // The attention mask of head 1, sample 1: the queries' global positions key it.
  std::vector<float> ones(queries * seq, 1.0f), masked(queries * seq);
  apply_attention_dropout(dropout, 1, 1, seq, ones.data(), masked.data(), queries,
                          positions.data());
  const uint64_t attention_site = block_site_key(key, 1, 1);
  for (int64_t i = 0; i < queries; ++i)
    for (int64_t j = 0; j < seq; ++j)
      EXPECT_EQ(masked[i * seq + j] != 0.0f,
                block_keeps(attention_site,
                            attention_math::dropout_element(
                                1, attention_math::query_position(i, seq, rows), j, seq),
                            key.p))
          << i << " " << j;
  // A residual site on sequence-parallel shard 1 of 2 of the rank's positions
  // (its positions 6 and 7), two samples.
  const int64_t dim = 3, first_position = 2, local = 2;
  Tensor slice(2 * local, dim);
  slice.fill(1.0f);
  apply_block_dropout(dropout, BlockDropoutSite::AfterProjection, local, slice, first_position,
                      positions.data());
  for (int64_t sample = 0; sample < 2; ++sample) {
    const uint64_t projection = block_site_key(key, sample, 2);
    for (int64_t within = 0; within < local * dim; ++within)
      EXPECT_EQ(slice.data()[sample * local * dim + within] != 0.0f,
                block_keeps(projection,
                            residual_dropout_element(first_position, dim, within, positions.data()),
                            key.p))
          << sample << " " << within;
  }
}

// The three steps over two vocabulary shards, as the kernels and
// gpu_token_loss run them, against core/nn's single-device loss.
TEST(TransformerMathTest, VocabParallelTokenLossMatchesCore) {
  const int64_t rows = 6, vocab = 10, tp = 2;
  Tensor logits = random_tensor(rows, vocab, 10, 3.0);
  logits.row(2)[7] = logits.row(2)[1] = 50.0f;  // a tie: the first maximum counts
  const std::vector<int32_t> labels = {3, 9, 7, 0, 5, 4};
  const std::vector<uint8_t> mask = {1, 1, 1, 0, 1, 1};
  Tensor expected_grad(rows, vocab);
  const TokenLoss expected = token_cross_entropy(logits, labels, mask, &expected_grad);

  const int64_t held = vocab / tp;
  std::vector<float> row_max(rows, -INFINITY), sum_exp(rows, 0.0f), label_logit(rows, 0.0f),
      ties(rows, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < vocab; ++c) row_max[r] = std::fmax(row_max[r], logits.row(r)[c]);
  for (int64_t k = 0; k < tp; ++k)
    for (int64_t r = 0; r < rows; ++r) {
      if (!mask[r]) continue;
      double local = 0;
      for (int64_t c = k * held; c < (k + 1) * held; ++c) {
        local += token_loss_math::exp_shifted(logits.row(r)[c], row_max[r]);
        if (c < labels[r] && logits.row(r)[c] == row_max[r]) ties[r] += 1.0f;
      }
      sum_exp[r] += static_cast<float>(local);
      if (labels[r] / held == k) label_logit[r] = logits.row(r)[labels[r]];
    }
  double loss_sum = 0;
  int64_t correct = 0, kept = 0;
  for (int64_t r = 0; r < rows; ++r) kept += mask[r];
  std::vector<float> grad;
  for (int64_t r = 0; r < rows; ++r) {
    if (mask[r]) {
      loss_sum += token_loss_math::row_loss(sum_exp[r], row_max[r], label_logit[r]);
      correct += token_loss_math::correct(label_logit[r], row_max[r], ties[r]) ? 1 : 0;
    }
    for (int64_t c = 0; c < vocab; ++c)
      grad.push_back(mask[r] ? token_loss_math::gradient(logits.row(r)[c], row_max[r], sum_exp[r],
                                                         1.0f / static_cast<float>(kept),
                                                         c == labels[r], 1.0f)
                             : 0.0f);
  }
  EXPECT_NEAR(loss_sum, expected.loss_sum, 1e-5 * std::fabs(expected.loss_sum));
  // count_correct's rule: the first maximal logit is the label (row 2's label
  // 7 ties with column 1, which comes first, so it is wrong).
  int64_t expected_correct = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t best = 0;
    for (int64_t c = 1; c < vocab; ++c)
      if (logits.row(r)[c] > logits.row(r)[best]) best = c;
    expected_correct += mask[r] && best == labels[r] ? 1 : 0;
  }
  EXPECT_EQ(correct, expected_correct);
  expect_close(grad, values(expected_grad), 1e-5, 1e-7, "token loss gradient");
}

// The rotary kernel's loop (one pair per thread: row, slot, c) on the host,
// against core's rotary_forward and rotary_backward: the same columns and the
// same floats (the device may fuse a multiply-add; the host does not).
TEST(TransformerMathTest, RotaryMatchesCore) {
  for (int64_t kv_heads : {4, 2, 1}) {
    AttentionShape shape{2, 5, 4, 6, true};
    shape.kv_heads = kv_heads;
    const RotaryTable table = rotary_table(shape.seq, shape.head_dim, kDefaultRopeTheta);
    const Tensor qkv = random_tensor(shape.rows(), shape.qkv_width(), 90);
    for (float direction : {1.0f, -1.0f}) {
      Tensor expected = qkv.clone();
      if (direction > 0)
        rotary_forward(expected, shape, table);
      else
        rotary_backward(expected, shape, table);
      std::vector<float> port = values(qkv);
      const int64_t half = shape.head_dim / 2;
      const int64_t slots = shape.heads + kv_heads;
      for (int64_t i = 0; i < shape.rows() * slots * half; ++i) {
        const int64_t c = i % half;
        const int64_t slot = (i / half) % slots;
        const int64_t r = i / (half * slots);
        const int64_t angle = (r % shape.seq) * half + c;
        float* head = port.data() + r * shape.qkv_width() +
                      rotary_math::turned_column(slot, shape.heads, shape.group(), shape.head_dim);
        rotary_math::turn_pair(head[c], head[c + half], table.cos[angle], table.sin[angle],
                               direction);
      }
      EXPECT_EQ(port, values(expected)) << "kv_heads " << kv_heads << " direction " << direction;
    }
  }
}

}  // namespace
}  // namespace pipelab::gpu
