// Ring attention (ring_attention.h) against attention over the whole sequence
// on one device: every context rank's output at its positions, and the
// gradients of q, k and v once each block's dK and dV are summed by the rank
// that holds the keys, against finite differences of the whole attention
// computed in double precision.
#include "core/nn/ring_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipelab {
namespace {

constexpr int64_t kSeq = 16;
constexpr int64_t kDim = 4;

struct Head {
  std::vector<float> q, k, v;  // [kSeq, kDim], token t at row t (global order)
};

Head random_head(unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Head head;
  for (std::vector<float>* values : {&head.q, &head.k, &head.v}) {
    values->resize(kSeq * kDim);
    for (float& x : *values) x = normal(rng);
  }
  return head;
}

// Whole-sequence attention in double: O for every token, and the loss
// sum(O * weights) for finite differences.
std::vector<double> whole_attention(const std::vector<double>& q, const std::vector<double>& k,
                                    const std::vector<double>& v, bool causal) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(kDim));
  std::vector<double> out(kSeq * kDim, 0.0);
  for (int64_t i = 0; i < kSeq; ++i) {
    std::vector<double> scores;
    double most = -1e300;
    const int64_t last = causal ? i : kSeq - 1;
    for (int64_t j = 0; j <= last; ++j) {
      double s = 0;
      for (int64_t d = 0; d < kDim; ++d) s += q[i * kDim + d] * k[j * kDim + d];
      scores.push_back(scale * s);
      most = std::max(most, scale * s);
    }
    double sum = 0;
    for (double& s : scores) sum += (s = std::exp(s - most));
    for (int64_t j = 0; j <= last; ++j)
      for (int64_t d = 0; d < kDim; ++d) out[i * kDim + d] += scores[j] / sum * v[j * kDim + d];
  }
  return out;
}

std::vector<double> widened(const std::vector<float>& values) {
  return {values.begin(), values.end()};
}

// The rows of `values` at `positions`, in that order.
std::vector<float> rows_at(const std::vector<float>& values,
                           const std::vector<int64_t>& positions) {
  std::vector<float> rows;
  for (int64_t p : positions)
    rows.insert(rows.end(), values.begin() + p * kDim, values.begin() + (p + 1) * kDim);
  return rows;
}

// What every rank computes, forward and backward, assembled in global order.
struct RingResult {
  std::vector<float> output, dq, dk, dv;  // [kSeq, kDim]
};

RingResult run_ring(const Head& head, int cp, bool causal, const std::vector<float>& output_grad) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(kDim));
  std::vector<std::vector<int64_t>> positions(cp);
  std::vector<std::vector<float>> q(cp), k(cp), v(cp);
  for (int r = 0; r < cp; ++r) {
    positions[r] = context_positions(kSeq, cp, r);
    q[r] = rows_at(head.q, positions[r]);
    k[r] = rows_at(head.k, positions[r]);
    v[r] = rows_at(head.v, positions[r]);
  }
  const int64_t local = kSeq / cp;
  const auto block_of = [&](int r) {
    return AttentionBlock{k[r].data(), v[r].data(), positions[r].data(), local};
  };
  RingResult result{std::vector<float>(kSeq * kDim), std::vector<float>(kSeq * kDim),
                    std::vector<float>(kSeq * kDim), std::vector<float>(kSeq * kDim)};
  std::vector<std::vector<float>> dk(cp, std::vector<float>(local * kDim, 0.0f));
  std::vector<std::vector<float>> dv(cp, std::vector<float>(local * kDim, 0.0f));
  for (int r = 0; r < cp; ++r) {
    // The ring: a rank's own block first, then its predecessor's, and so on.
    RingAttentionForward forward(q[r].data(), positions[r].data(), local, kDim, scale, causal);
    for (int step = 0; step < cp; ++step) forward.add(block_of((r - step + cp) % cp));
    std::vector<float> out(local * kDim), lse(local);
    forward.finish(out.data(), lse.data());
    const std::vector<float> dout = rows_at(output_grad, positions[r]);
    std::vector<float> dq(local * kDim, 0.0f);
    const RingAttentionGradientInput input{
        q[r].data(), positions[r].data(), out.data(), lse.data(), dout.data(), local, kDim, scale,
        causal};
    for (int step = 0; step < cp; ++step) {
      const int owner = (r - step + cp) % cp;
      ring_attention_block_backward(input, block_of(owner), dq.data(), dk[owner].data(),
                                    dv[owner].data());
    }
    for (int64_t t = 0; t < local; ++t)
      for (int64_t d = 0; d < kDim; ++d) {
        result.output[positions[r][t] * kDim + d] = out[t * kDim + d];
        result.dq[positions[r][t] * kDim + d] = dq[t * kDim + d];
      }
  }
  for (int r = 0; r < cp; ++r)
    for (int64_t t = 0; t < local; ++t)
      for (int64_t d = 0; d < kDim; ++d) {
        result.dk[positions[r][t] * kDim + d] = dk[r][t * kDim + d];
        result.dv[positions[r][t] * kDim + d] = dv[r][t * kDim + d];
      }
  return result;
}

TEST(RingAttention, EachRankHoldsTwoChunksThatBalanceTheCausalWork) {
  EXPECT_EQ(context_positions(8, 2, 0), (std::vector<int64_t>{0, 1, 6, 7}));
  EXPECT_EQ(context_positions(8, 2, 1), (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(context_positions(8, 1, 0), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_THROW(context_positions(12, 4, 0), std::invalid_argument);  // 8 chunks of 12 tokens
  EXPECT_THROW(context_positions(8, 2, 2), std::invalid_argument);
}

TEST(RingAttention, EveryRanksOutputIsTheWholeSequencesAttention) {
  const Head head = random_head(3);
  const std::vector<float> no_grad(kSeq * kDim, 0.0f);
  for (bool causal : {true, false})
    for (int cp : {1, 2, 4}) {
      const std::vector<double> expected =
          whole_attention(widened(head.q), widened(head.k), widened(head.v), causal);
      const RingResult ring = run_ring(head, cp, causal, no_grad);
      for (int64_t x = 0; x < kSeq * kDim; ++x)
        ASSERT_NEAR(ring.output[x], expected[x], 1e-5)
            << "cp " << cp << (causal ? " causal" : "") << " value " << x;
    }
}

TEST(RingAttention, TheOrderBlocksArriveInDoesNotChangeTheOutput) {
  const Head head = random_head(5);
  const std::vector<int64_t> positions = context_positions(kSeq, 4, 1);
  const std::vector<float> q = rows_at(head.q, positions);
  std::vector<std::vector<int64_t>> block_positions(4);
  std::vector<std::vector<float>> k(4), v(4);
  for (int r = 0; r < 4; ++r) {
    block_positions[r] = context_positions(kSeq, 4, r);
    k[r] = rows_at(head.k, block_positions[r]);
    v[r] = rows_at(head.v, block_positions[r]);
  }
  const auto output = [&](const std::vector<int>& order) {
    RingAttentionForward forward(q.data(), positions.data(), 4, kDim, 0.5f, true);
    for (int r : order) forward.add({k[r].data(), v[r].data(), block_positions[r].data(), 4});
    std::vector<float> out(4 * kDim), lse(4);
    forward.finish(out.data(), lse.data());
    return out;
  };
  const std::vector<float> ring = output({1, 0, 3, 2});
  const std::vector<float> reversed = output({2, 3, 0, 1});
  for (size_t x = 0; x < ring.size(); ++x) EXPECT_NEAR(ring[x], reversed[x], 1e-6) << x;
}

TEST(RingAttention, GradientsSummedOverTheRingAreTheFiniteDifferences) {
  const Head head = random_head(11);
  std::mt19937 rng(12);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> weights(kSeq * kDim);  // loss = sum(O * weights): dL/dO = weights
  for (float& w : weights) w = normal(rng);
  for (bool causal : {true, false}) {
    // Central differences of the whole attention in double.
    const auto loss = [&](const std::vector<double>& q, const std::vector<double>& k,
                          const std::vector<double>& v) {
      const std::vector<double> out = whole_attention(q, k, v, causal);
      double sum = 0;
      for (int64_t x = 0; x < kSeq * kDim; ++x) sum += out[x] * weights[x];
      return sum;
    };
    const double eps = 1e-5;
    std::vector<double> q = widened(head.q), k = widened(head.k), v = widened(head.v);
    std::vector<std::vector<double>> expected(3, std::vector<double>(kSeq * kDim));
    std::vector<double>* inputs[3] = {&q, &k, &v};
    for (int which = 0; which < 3; ++which)
      for (int64_t x = 0; x < kSeq * kDim; ++x) {
        const double kept = (*inputs[which])[x];
        (*inputs[which])[x] = kept + eps;
        const double up = loss(q, k, v);
        (*inputs[which])[x] = kept - eps;
        const double down = loss(q, k, v);
        (*inputs[which])[x] = kept;
        expected[which][x] = (up - down) / (2 * eps);
      }
    for (int cp : {1, 2, 4}) {
      const RingResult ring = run_ring(head, cp, causal, weights);
      const std::vector<float>* got[3] = {&ring.dq, &ring.dk, &ring.dv};
      const char* names[3] = {"dq", "dk", "dv"};
      for (int which = 0; which < 3; ++which)
        for (int64_t x = 0; x < kSeq * kDim; ++x)
          ASSERT_NEAR((*got[which])[x], expected[which][x],
                      1e-4 * std::max(1.0, std::abs(expected[which][x])))
              << names[which] << " value " << x << ", cp " << cp << (causal ? " causal" : "");
    }
  }
}

}  // namespace
}  // namespace pipelab
