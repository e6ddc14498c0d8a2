// The pre-norm GPT block: every gradient against central differences for both
// norms, both activations, causal and not; the BI/BW split and the recomputed
// attention probabilities change nothing; tensor-parallel shards run in
// lockstep threads (the all-reduce summing on the host) reproduce tp = 1, and
// so do sequence-parallel shards (gathers and scatters on the host).
#include "core/nn/gpt_block.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::expect_close;
using testing::expect_gradient_matches;
using testing::HostAllReduce;
using testing::HostSequenceCollectives;
using testing::positions_of;
using testing::random_tensor;
using testing::weighted_sum;

constexpr int64_t kBatch = 2;
constexpr int64_t kSeq = 3;
constexpr int64_t kRows = kBatch * kSeq;

GptBlockConfig tiny_config(NormType norm, BlockActivation activation, bool causal) {
  GptBlockConfig config;
  config.dim = 8;
  config.heads = 4;
  config.ffn_hidden = 12;
  config.norm = norm;
  config.activation = activation;
  config.causal = causal;
  return config;
}

// Norm gains and biases away from their 1 and 0, so their roles are exercised.
void perturb_norms(GptBlock& block, uint32_t seed) {
  GptBlockTensors& w = block.weights();
  w.norm1_gain.copy_from(random_tensor(1, 8, seed, 0.5f, 1.5f));
  w.norm2_gain.copy_from(random_tensor(1, 8, seed + 1, 0.5f, 1.5f));
  if (!w.norm1_bias.empty()) w.norm1_bias.copy_from(random_tensor(1, 8, seed + 2));
  if (!w.norm2_bias.empty()) w.norm2_bias.copy_from(random_tensor(1, 8, seed + 3));
}

Tensor run_forward(const GptBlock& block, const Tensor& x) {
  GptBlockCache cache;
  Tensor y(x.rows(), x.cols());
  block.forward(x, kBatch, kSeq, cache, y, all_reduce_nothing);
  return y;
}

using Variant = std::tuple<NormType, BlockActivation, bool>;

class TransformerBlockGradient : public ::testing::TestWithParam<Variant> {};

TEST_P(TransformerBlockGradient, EveryGradientMatchesFiniteDifferences) {
  const auto [norm, activation, causal] = GetParam();
  GptBlock block(tiny_config(norm, activation, causal), {});
  block.init(3, 1);
  perturb_norms(block, 10);
  Tensor x = random_tensor(kRows, 8, 20, -2.0f, 2.0f);
  const Tensor upstream = random_tensor(kRows, 8, 21);
  const auto loss = [&] { return weighted_sum(run_forward(block, x), upstream); };

  GptBlockCache cache;
  Tensor y(kRows, 8);
  block.forward(x, kBatch, kSeq, cache, y, all_reduce_nothing);
  Tensor dx(kRows, 8);
  block.zero_grad();
  block.backward(x, upstream, cache, dx, all_reduce_nothing);

  expect_gradient_matches(x, loss, dx, "block dx", 1e-2, 1e-3, 1e-2);
  const std::vector<Tensor*> weights = block.weights().list();
  const std::vector<Tensor*> grads = block.gradients().list();
  ASSERT_EQ(weights.size(), grads.size());
  for (size_t i = 0; i < weights.size(); ++i)
    expect_gradient_matches(*weights[i], loss, *grads[i], "block tensor " + std::to_string(i), 1e-2,
                            1e-3, 1e-2);
}

std::string variant_name(const ::testing::TestParamInfo<Variant>& info) {
  const auto [norm, activation, causal] = info.param;
  return std::string(norm == NormType::LayerNorm ? "LayerNorm" : "RmsNorm") +
         (activation == BlockActivation::Gelu ? "Gelu" : "SwiGlu") + (causal ? "Causal" : "Full");
}

INSTANTIATE_TEST_SUITE_P(
    TransformerBlock, TransformerBlockGradient,
    ::testing::Combine(::testing::Values(NormType::LayerNorm, NormType::RmsNorm),
                       ::testing::Values(BlockActivation::Gelu, BlockActivation::SwiGlu),
                       ::testing::Bool()),
    variant_name);

TEST(TransformerBlock, WithoutBiasesAndWithRecomputeGradientsStillMatch) {
  GptBlockConfig config = tiny_config(NormType::RmsNorm, BlockActivation::SwiGlu, true);
  config.bias = false;
  config.keep_attention_probabilities = false;
  GptBlock block(config, {});
  block.init(4, 0);
  // RMSNorm gains plus four weights: nothing else.
  EXPECT_EQ(block.weights().list().size(), 6u);
  Tensor x = random_tensor(kRows, 8, 30);
  const Tensor upstream = random_tensor(kRows, 8, 31);
  GptBlockCache cache;
  Tensor y(kRows, 8);
  block.forward(x, kBatch, kSeq, cache, y, all_reduce_nothing);
  EXPECT_TRUE(cache.probabilities.empty());
  Tensor dx(kRows, 8);
  block.backward(x, upstream, cache, dx, all_reduce_nothing);
  const auto loss = [&] { return weighted_sum(run_forward(block, x), upstream); };
  expect_gradient_matches(x, loss, dx, "dx", 1e-2, 1e-3, 1e-2);
  expect_gradient_matches(block.weights().qkv_weight, loss, block.gradients().qkv_weight, "dWqkv",
                          1e-2, 1e-3, 1e-2);
}

TEST(TransformerBlock, SplitBackwardAndRecomputeChangeNothing) {
  const GptBlockConfig kept = tiny_config(NormType::LayerNorm, BlockActivation::Gelu, true);
  GptBlockConfig lean = kept;
  lean.keep_attention_probabilities = false;
  GptBlock a(kept, {});
  GptBlock b(lean, {});
  a.init(5, 2);
  b.init(5, 2);
  const Tensor x = random_tensor(kRows, 8, 40);
  const Tensor dy = random_tensor(kRows, 8, 41);
  GptBlockCache cache_a, cache_b;
  Tensor ya(kRows, 8), yb(kRows, 8), dxa(kRows, 8), dxb(kRows, 8);
  a.forward(x, kBatch, kSeq, cache_a, ya, all_reduce_nothing);
  b.forward(x, kBatch, kSeq, cache_b, yb, all_reduce_nothing);
  EXPECT_TRUE(testing::bitwise_equal(ya, yb));
  EXPECT_EQ(cache_a.forward_floats() - cache_b.forward_floats(), kBatch * 4 * kSeq * kSeq);
  a.backward(x, dy, cache_a, dxa, all_reduce_nothing);
  b.backward_input(x, dy, cache_b, dxb, all_reduce_nothing);
  b.backward_weight(x, dy, cache_b);
  EXPECT_TRUE(testing::bitwise_equal(dxa, dxb));
  for (size_t i = 0; i < a.gradients().list().size(); ++i)
    EXPECT_TRUE(testing::bitwise_equal(*a.gradients().list()[i], *b.gradients().list()[i])) << i;
  // Forward keeps norm1_out, h and norm2_out (dim each), qkv (3 dim), the
  // attention output (dim), ffn1's output and the activation (f each), and P.
  EXPECT_EQ(cache_a.forward_floats(), kRows * (8 * 7 + 12 * 2) + kBatch * 4 * kSeq * kSeq);
}

void expect_shards_match_whole(const GptBlockConfig& config, int tp,
                               const BlockDropout& dropout = {}) {
  GptBlock whole(config, {});
  whole.init(7, 3);
  const Tensor x = random_tensor(kRows, config.dim, 50);
  const Tensor dy = random_tensor(kRows, config.dim, 51);
  GptBlockCache cache;
  Tensor y(kRows, config.dim), dx(kRows, config.dim);
  whole.forward(x, kBatch, kSeq, cache, y, all_reduce_nothing, dropout);
  whole.backward(x, dy, cache, dx, all_reduce_nothing);

  std::vector<std::unique_ptr<GptBlock>> shards;
  for (int k = 0; k < tp; ++k) {
    shards.push_back(std::make_unique<GptBlock>(config, BlockShard{tp, k}));
    shards[k]->init(7, 3);
  }
  std::vector<Tensor> ys, dxs;
  for (int k = 0; k < tp; ++k) {
    ys.emplace_back(kRows, config.dim);
    dxs.emplace_back(kRows, config.dim);
  }
  HostAllReduce reduce(tp);
  std::vector<std::thread> threads;
  for (int k = 0; k < tp; ++k)
    threads.emplace_back([&, k] {
      const AllReduceFunction all_reduce = [&](float* data, int64_t count) {
        reduce(k, data, count);
      };
      GptBlockCache shard_cache;
      shards[k]->forward(x, kBatch, kSeq, shard_cache, ys[k], all_reduce, dropout);
      shards[k]->backward(x, dy, shard_cache, dxs[k], all_reduce);
    });
  for (std::thread& thread : threads) thread.join();

  const std::string label = "tp " + std::to_string(tp) + " ";
  // Pasting every shard's weights back gives the whole block (evaluation's gather).
  GptBlock gathered(config, {});
  for (int k = 0; k < tp; ++k)
    paste_block_tensors(gathered.weights(), shards[k]->weights(), config, {tp, k});
  for (size_t i = 0; i < whole.weights().list().size(); ++i)
    EXPECT_TRUE(testing::bitwise_equal(*gathered.weights().list()[i], *whole.weights().list()[i]))
        << label << "gathered weight " << i;
  for (int k = 0; k < tp; ++k) {
    expect_close(ys[k], y, label + "y");
    expect_close(dxs[k], dx, label + "dx");
    // A shard initialised on its own holds exactly its slice of the whole block...
    GptBlockTensors expected_weights = slice_block_tensors(whole.weights(), config, {tp, k});
    GptBlockTensors expected_grads = slice_block_tensors(whole.gradients(), config, {tp, k});
    const std::vector<Tensor*> weights = shards[k]->weights().list();
    const std::vector<Tensor*> grads = shards[k]->gradients().list();
    ASSERT_EQ(weights.size(), expected_weights.list().size());
    for (size_t i = 0; i < weights.size(); ++i) {
      EXPECT_TRUE(testing::bitwise_equal(*weights[i], *expected_weights.list()[i]))
          << label << "shard " << k << " weight " << i;
      // ...and its gradients are that slice of the whole block's.
      expect_close(*grads[i], *expected_grads.list()[i],
                   label + "shard " + std::to_string(k) + " gradient " + std::to_string(i));
    }
  }
}

TEST(TransformerBlock, TensorParallelShardsReproduceTheWholeBlock) {
  for (NormType norm : {NormType::LayerNorm, NormType::RmsNorm})
    for (BlockActivation activation : {BlockActivation::Gelu, BlockActivation::SwiGlu}) {
      const GptBlockConfig config = tiny_config(norm, activation, true);
      expect_shards_match_whole(config, 2);
      expect_shards_match_whole(config, 4);
    }
  GptBlockConfig lean = tiny_config(NormType::LayerNorm, BlockActivation::Gelu, false);
  lean.keep_attention_probabilities = false;
  expect_shards_match_whole(lean, 2);
  // Dropout masks are keyed by the whole block's heads and features: every
  // shard draws its part of the same masks.
  GptBlockConfig dropped = tiny_config(NormType::LayerNorm, BlockActivation::Gelu, true);
  dropped.dropout = 0.3f;
  expect_shards_match_whole(dropped, 2, {0.3f, 9, 3, 4, 10});
  expect_shards_match_whole(dropped, 4, {0.3f, 9, 3, 4, 10});
}

// Sequence parallelism: each shard gets its positions of x and dy and must
// give the same positions of y and dx; its gradients are its slice of the
// whole block's, except the norms', which sum to the whole block's over the
// shards (the step's tensor-parallel all-reduce does that sum).
void expect_sequence_parallel_shards_match_whole(const GptBlockConfig& config, int tp,
                                                 const BlockDropout& dropout = {}) {
  constexpr int64_t seq = 4;
  const int64_t rows = kBatch * seq;
  const int64_t local = seq / tp;
  GptBlock whole(config, {});
  whole.init(7, 3);
  perturb_norms(whole, 60);
  const Tensor x = random_tensor(rows, config.dim, 52);
  const Tensor dy = random_tensor(rows, config.dim, 53);
  GptBlockCache cache;
  Tensor y(rows, config.dim), dx(rows, config.dim);
  whole.forward(x, kBatch, seq, cache, y, all_reduce_nothing, dropout);
  whole.backward(x, dy, cache, dx, all_reduce_nothing);

  std::vector<std::unique_ptr<GptBlock>> shards;
  std::vector<Tensor> ys, dxs;
  for (int k = 0; k < tp; ++k) {
    shards.push_back(std::make_unique<GptBlock>(config, BlockShard{tp, k, true}));
    shards[k]->init(7, 3);
    perturb_norms(*shards[k], 60);
    ys.emplace_back(kBatch * local, config.dim);
    dxs.emplace_back(kBatch * local, config.dim);
  }
  HostSequenceCollectives collectives(tp);
  std::vector<std::thread> threads;
  for (int k = 0; k < tp; ++k)
    threads.emplace_back([&, k] {
      const BlockCollectives mine{all_reduce_nothing, collectives.for_shard(k), {}};
      const Tensor x_part = positions_of(x, kBatch, seq, k * local, local);
      const Tensor dy_part = positions_of(dy, kBatch, seq, k * local, local);
      GptBlockCache shard_cache;
      shards[k]->forward(x_part, kBatch, seq, shard_cache, ys[k], mine, dropout);
      shards[k]->backward(x_part, dy_part, shard_cache, dxs[k], mine);
    });
  for (std::thread& thread : threads) thread.join();

  const std::string label = "sequence parallel tp " + std::to_string(tp) + " ";
  GptBlockTensors summed_norms = slice_block_tensors(whole.gradients(), config, {});
  for (Tensor* t : {&summed_norms.norm1_gain, &summed_norms.norm1_bias, &summed_norms.norm2_gain,
                    &summed_norms.norm2_bias})
    t->set_zero();
  for (int k = 0; k < tp; ++k) {
    expect_close(ys[k], positions_of(y, kBatch, seq, k * local, local), label + "y");
    expect_close(dxs[k], positions_of(dx, kBatch, seq, k * local, local), label + "dx");
    GptBlockTensors& grads = shards[k]->gradients();
    GptBlockTensors expected = slice_block_tensors(whole.gradients(), config, {tp, k});
    for (auto member : {&GptBlockTensors::qkv_weight, &GptBlockTensors::qkv_bias,
                        &GptBlockTensors::proj_weight, &GptBlockTensors::proj_bias,
                        &GptBlockTensors::ffn1_weight, &GptBlockTensors::ffn1_bias,
                        &GptBlockTensors::ffn2_weight, &GptBlockTensors::ffn2_bias})
      expect_close(grads.*member, expected.*member, label + "linear gradient");
    const std::vector<Tensor*> partial = shards[k]->sequence_partial_gradients();
    EXPECT_EQ(partial.size(), config.norm == NormType::LayerNorm ? 4u : 2u);
    summed_norms.norm1_gain.add(grads.norm1_gain);
    summed_norms.norm2_gain.add(grads.norm2_gain);
    if (!grads.norm1_bias.empty()) summed_norms.norm1_bias.add(grads.norm1_bias);
    if (!grads.norm2_bias.empty()) summed_norms.norm2_bias.add(grads.norm2_bias);
  }
  expect_close(summed_norms.norm1_gain, whole.gradients().norm1_gain, label + "norm1 gain");
  expect_close(summed_norms.norm2_gain, whole.gradients().norm2_gain, label + "norm2 gain");
  if (config.norm == NormType::LayerNorm) {
    expect_close(summed_norms.norm1_bias, whole.gradients().norm1_bias, label + "norm1 bias");
    expect_close(summed_norms.norm2_bias, whole.gradients().norm2_bias, label + "norm2 bias");
  }
}

TEST(TransformerBlock, SequenceParallelShardsReproduceTheWholeBlock) {
  for (NormType norm : {NormType::LayerNorm, NormType::RmsNorm})
    for (BlockActivation activation : {BlockActivation::Gelu, BlockActivation::SwiGlu}) {
      const GptBlockConfig config = tiny_config(norm, activation, true);
      expect_sequence_parallel_shards_match_whole(config, 2);
      expect_sequence_parallel_shards_match_whole(config, 4);
    }
  GptBlockConfig lean = tiny_config(NormType::LayerNorm, BlockActivation::Gelu, false);
  lean.keep_attention_probabilities = false;
  expect_sequence_parallel_shards_match_whole(lean, 2);
  // The masks after proj and ffn2 are keyed by the whole sequence's position.
  GptBlockConfig dropped = tiny_config(NormType::LayerNorm, BlockActivation::Gelu, true);
  dropped.dropout = 0.3f;
  expect_sequence_parallel_shards_match_whole(dropped, 2, {0.3f, 9, 3, 4, 10});
}

TEST(TransformerBlock, SequenceParallelNeedsASequenceTpDivides) {
  GptBlock shard(tiny_config(NormType::LayerNorm, BlockActivation::Gelu, true), {2, 0, true});
  GptBlockCache cache;
  Tensor x(kBatch, 8), y(kBatch, 8);
  try {
    shard.forward(x, kBatch, 3, cache, y, BlockCollectives{});
    FAIL() << "tp = 2 cannot split 3 positions";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("does not divide the sequence length 3"), std::string::npos)
        << error.what();
  }
}

// With a fixed mask (the same BlockDropout each time) the block is a smooth
// function again, so finite differences check the masked gradients; the
// kept and the recomputed attention probabilities give the same bits.
TEST(TransformerBlock, DropoutGradientsMatchFiniteDifferencesWithAFixedMask) {
  const BlockDropout dropout{0.3f, 11, 2, 5, 40};
  for (bool keep : {true, false}) {
    GptBlockConfig config = tiny_config(NormType::LayerNorm, BlockActivation::Gelu, true);
    config.dropout = 0.3f;
    config.keep_attention_probabilities = keep;
    GptBlock block(config, {});
    block.init(3, 2);
    perturb_norms(block, 12);
    Tensor x = random_tensor(kRows, 8, 60, -2.0f, 2.0f);
    const Tensor upstream = random_tensor(kRows, 8, 61);
    const auto forward = [&](const BlockDropout& which) {
      GptBlockCache cache;
      Tensor y(kRows, 8);
      block.forward(x, kBatch, kSeq, cache, y, all_reduce_nothing, which);
      return y;
    };
    const auto loss = [&] { return weighted_sum(forward(dropout), upstream); };
    // The masks bite, and redrawing them gives the same bits.
    EXPECT_FALSE(testing::bitwise_equal(forward(dropout), forward({})));
    EXPECT_TRUE(testing::bitwise_equal(forward(dropout), forward(dropout)));

    GptBlockCache cache;
    Tensor y(kRows, 8), dx(kRows, 8);
    block.forward(x, kBatch, kSeq, cache, y, all_reduce_nothing, dropout);
    block.zero_grad();
    block.backward(x, upstream, cache, dx, all_reduce_nothing);
    const std::string how = keep ? "kept P " : "recomputed P ";
    expect_gradient_matches(x, loss, dx, how + "dx", 1e-2, 1e-3, 1e-2);
    const std::vector<Tensor*> weights = block.weights().list();
    const std::vector<Tensor*> grads = block.gradients().list();
    for (size_t i = 0; i < weights.size(); ++i)
      expect_gradient_matches(*weights[i], loss, *grads[i], how + "tensor " + std::to_string(i),
                              1e-2, 1e-3, 1e-2);
  }
}

TEST(TransformerBlock, DropoutMasksFollowTheGlobalSampleNotTheMicroBatch) {
  GptBlockConfig config = tiny_config(NormType::LayerNorm, BlockActivation::Gelu, true);
  config.dropout = 0.5f;
  GptBlock block(config, {});
  block.init(3, 2);
  const Tensor x = random_tensor(kRows, 8, 70);
  GptBlockCache cache;
  Tensor whole(kRows, 8);
  block.forward(x, kBatch, kSeq, cache, whole, all_reduce_nothing, {0.5f, 1, 2, 3, 100});
  // Sample 1 alone, as a micro-batch starting at global sample 101.
  Tensor second_x(kSeq, 8), second_y(kSeq, 8);
  std::copy(x.row(kSeq), x.row(kSeq) + kSeq * 8, second_x.data());
  block.forward(second_x, 1, kSeq, cache, second_y, all_reduce_nothing, {0.5f, 1, 2, 3, 101});
  // Equal up to the GEMMs' blocking (a dropped element would differ by far more).
  for (int64_t i = 0; i < kSeq * 8; ++i) EXPECT_NEAR(second_y.data()[i], whole.row(kSeq)[i], 1e-5);
  // Keyed as sample 100 instead, it draws other masks.
  Tensor other(kSeq, 8);
  block.forward(second_x, 1, kSeq, cache, other, all_reduce_nothing, {0.5f, 1, 2, 3, 100});
  EXPECT_GT(testing::max_abs_difference(other, second_y), 1e-2);
}

TEST(TransformerBlock, UserErrorsAreExplained) {
  GptBlockConfig config = tiny_config(NormType::LayerNorm, BlockActivation::Gelu, true);
  config.heads = 3;
  EXPECT_THROW(GptBlock(config, {}), std::invalid_argument);
  config.heads = 4;
  try {
    GptBlock block(config, {8, 0});
    FAIL() << "tp = 8 cannot split 4 heads";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("whole heads"), std::string::npos);
  }
  EXPECT_THROW(GptBlock(config, {2, 2}), std::invalid_argument);
  GptBlock block(config, {});
  GptBlockCache cache;
  const Tensor x(5, 8);
  Tensor y(5, 8);
  EXPECT_THROW(block.forward(x, kBatch, kSeq, cache, y, all_reduce_nothing), std::invalid_argument);
}

// LLaMA's attention: 4 query heads over `kv_heads` key/value heads, q and k
// turned by position, RMSNorm, SwiGLU and no biases.
GptBlockConfig llama_config(int64_t kv_heads) {
  GptBlockConfig config = tiny_config(NormType::RmsNorm, BlockActivation::SwiGlu, true);
  config.bias = false;
  config.kv_heads = kv_heads;
  config.rotary = true;
  return config;
}

TEST(TransformerBlock, GroupedQueryAndRotaryGradientsMatchFiniteDifferences) {
  for (int64_t kv_heads : {2, 1}) {
    const GptBlockConfig config = llama_config(kv_heads);
    GptBlock block(config, {});
    block.init(3, 1);
    perturb_norms(block, 10);
    // QKV is dim + 2 kv_heads head_dim wide.
    EXPECT_EQ(block.weights().qkv_weight.cols(), 8 + 2 * kv_heads * 2);
    Tensor x = random_tensor(kRows, 8, 20, -2.0f, 2.0f);
    const Tensor upstream = random_tensor(kRows, 8, 21);
    const auto loss = [&] { return weighted_sum(run_forward(block, x), upstream); };
    GptBlockCache cache;
    Tensor y(kRows, 8), dx(kRows, 8);
    block.forward(x, kBatch, kSeq, cache, y, all_reduce_nothing);
    block.zero_grad();
    block.backward(x, upstream, cache, dx, all_reduce_nothing);
    const std::string label = "kv_heads " + std::to_string(kv_heads) + " ";
    expect_gradient_matches(x, loss, dx, label + "dx", 1e-2, 1e-3, 1e-2);
    const std::vector<Tensor*> weights = block.weights().list();
    const std::vector<Tensor*> grads = block.gradients().list();
    for (size_t i = 0; i < weights.size(); ++i)
      expect_gradient_matches(*weights[i], loss, *grads[i], label + "tensor " + std::to_string(i),
                              1e-2, 1e-3, 1e-2);
  }
}

// The rotation changes the block's output (it is not a no-op at positions > 0).
TEST(TransformerBlock, RotaryPositionsChangeTheOutput) {
  GptBlockConfig turned = llama_config(2);
  GptBlockConfig plain = turned;
  plain.rotary = false;
  GptBlock a(turned, {}), b(plain, {});
  a.init(3, 1);
  b.init(3, 1);
  const Tensor x = random_tensor(kRows, 8, 22);
  const Tensor ya = run_forward(a, x), yb = run_forward(b, x);
  EXPECT_GT(testing::max_abs_difference(ya, yb), 1e-3);
}

// Tensor parallelism splits whole query groups: each shard's slice of the
// grouped QKV weight is one contiguous block, with and without sequence
// parallelism (which gathers whole sequences before the rotation).
TEST(TransformerBlock, GroupedQueryShardsReproduceTheWholeBlock) {
  expect_shards_match_whole(llama_config(2), 2);
  GptBlockConfig lean = llama_config(2);
  lean.keep_attention_probabilities = false;
  expect_shards_match_whole(lean, 2);
  GptBlockConfig dropped = llama_config(2);
  dropped.dropout = 0.3f;
  expect_shards_match_whole(dropped, 2, {0.3f, 9, 3, 4, 10});
  expect_sequence_parallel_shards_match_whole(llama_config(2), 2);
}

TEST(TransformerBlock, GroupedQueryAndRotaryUserErrorsAreExplained) {
  const auto message = [](const GptBlockConfig& config, const BlockShard& shard) {
    try {
      GptBlock block(config, shard);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(llama_config(2), {4, 0}).find("does not divide the 2 key/value heads"),
            std::string::npos);
  EXPECT_NE(message(llama_config(3), {}).find("kv_heads = 3 does not divide the 4 heads"),
            std::string::npos);
  GptBlockConfig odd = llama_config(0);
  odd.heads = 8;  // head width 1
  EXPECT_NE(message(odd, {}).find("head width dim / heads = 1 is odd"), std::string::npos);
  odd.rotary = false;
  EXPECT_EQ(message(odd, {}), "accepted");
}

}  // namespace
}  // namespace pipelab
