// A tiny GPT as a stage stack: the embedding, Transformer block and per-token
// layers checked by finite differences through StageStack, and the life
// cycle the executor relies on (micro-batches, split backward, recompute,
// pipeline stages, memory accounting) with layers that keep a state.
#include <gtest/gtest.h>

#include <vector>

#include "core/nn/sequential.h"
#include "core/nn/token_cross_entropy.h"
#include "core/nn/transformer_block_layer.h"
#include "nn_test_helpers.h"
#include "tests/support/gpt_model.h"

namespace pipelab {
namespace {

using testing::bitwise_equal;
using testing::expect_gradient_matches;
using testing::max_abs_difference;

constexpr uint64_t kSeed = 77;
constexpr int64_t kVocab = 7;
constexpr int64_t kSeq = 5;
constexpr int64_t kDim = 8;

LayerSpec block(NormType norm, BlockActivation activation, bool bias) {
  LayerSpec spec;
  spec.type = LayerType::TransformerBlock;
  spec.heads = 2;
  spec.ffn = 12;
  spec.norm = norm;
  spec.activation = activation;
  spec.bias = bias;
  return spec;
}

// embedding, a GPT block, a LLaMA-style block, layernorm, linear to the vocabulary.
ModelSpec tiny_gpt() {
  ModelSpec model;
  model.input = {kSeq};
  LayerSpec embedding;
  embedding.type = LayerType::Embedding;
  embedding.vocab = kVocab;
  embedding.dim = kDim;
  LayerSpec norm;
  norm.type = LayerType::LayerNorm;
  LayerSpec head;
  head.type = LayerType::Linear;
  head.out = kVocab;
  model.layers = {embedding, block(NormType::LayerNorm, BlockActivation::Gelu, true),
                  block(NormType::RmsNorm, BlockActivation::SwiGlu, false), norm, head};
  return model;
}
constexpr int kLayers = 5;

// Sample b's tokens, labels and loss mask (the last position of each sample is dropped).
struct TokenBatch {
  Tensor ids;  // [batch, seq] ids as floats
  std::vector<int32_t> labels;
  std::vector<uint8_t> mask;
};

TokenBatch token_batch(int64_t batch) {
  TokenBatch data;
  data.ids = Tensor(batch, kSeq);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < kSeq; ++t) {
      data.ids.at(b, t) = static_cast<float>((3 * b + 5 * t + 1) % kVocab);
      data.labels.push_back(static_cast<int32_t>((b + 2 * t) % kVocab));
      data.mask.push_back(t + 1 < kSeq ? 1 : 0);
    }
  return data;
}

Tensor rows_of(const Tensor& full, int64_t begin, int64_t count) {
  Tensor part(count, full.cols());
  for (int64_t r = 0; r < count; ++r)
    for (int64_t c = 0; c < full.cols(); ++c) part.at(r, c) = full.at(begin + r, c);
  return part;
}

template <typename T>
std::vector<T> positions_of(const std::vector<T>& all, int64_t first_sample, int64_t samples) {
  return {all.begin() + first_sample * kSeq, all.begin() + (first_sample + samples) * kSeq};
}

int64_t counted(const std::vector<uint8_t>& mask) {
  int64_t n = 0;
  for (uint8_t keep : mask) n += keep;
  return n;
}

// The mean token loss of logits [batch, seq * vocab], and its gradient scaled
// for a step whose batch counts `step_tokens` positions.
TokenLoss token_loss(const Tensor& logits, const std::vector<int32_t>& labels,
                     const std::vector<uint8_t>& mask, int64_t step_tokens, Tensor* grad) {
  const Tensor rows = Tensor::view(logits, logits.rows() * kSeq, kVocab);
  Tensor row_grad(rows.rows(), kVocab);
  const TokenLoss loss = token_cross_entropy(rows, labels, mask, grad ? &row_grad : nullptr);
  if (grad) {
    *grad = std::move(row_grad);
    for (int64_t i = 0; i < grad->size(); ++i)
      grad->data()[i] *= static_cast<float>(loss.tokens) / static_cast<float>(step_tokens);
    grad->reshape(logits.rows(), logits.cols());
  }
  return loss;
}

struct StepResult {
  double loss_sum = 0;
  Tensor input_grad;  // of stages that start after layer 0
  std::vector<Tensor> grads;
};

// One step over `micro_batches` equal parts of the stage input `x` (the ids
// for a stage from layer 0), split backward (BI then BW) or fused.
StepResult run_step(Sequential& stage, const Tensor& x, const TokenBatch& data, int micro_batches,
                    bool split_backward, bool recompute = false) {
  const int64_t batch = x.rows();
  const int64_t size = batch / micro_batches;
  const int64_t step_tokens = counted(data.mask);
  StepResult result;
  result.input_grad = Tensor(batch, x.cols());
  stage.zero_grad();
  for (int m = 0; m < micro_batches; ++m) {
    ForwardInfo info;
    info.step = 3;
    info.first_sample = m * size;
    StageActivations saved;
    const Tensor y = stage.forward(rows_of(x, m * size, size), info, saved);
    if (recompute) {
      stage.drop_activations(saved);
      stage.recompute(saved);
    }
    Tensor grad;
    result.loss_sum += token_loss(y, positions_of(data.labels, m * size, size),
                                  positions_of(data.mask, m * size, size), step_tokens, &grad)
                           .loss_sum;
    Tensor dx;
    if (split_backward) {
      dx = stage.backward_input(std::move(grad), saved);
      stage.backward_weight(saved);
    } else {
      dx = stage.backward(std::move(grad), saved);
    }
    EXPECT_EQ(saved.bytes(), 0);
    if (dx.empty()) continue;
    for (int64_t r = 0; r < size; ++r)
      for (int64_t c = 0; c < x.cols(); ++c) result.input_grad.at(m * size + r, c) = dx.at(r, c);
  }
  for (const Parameter& p : stage.parameters()) result.grads.push_back(p.grad->clone());
  return result;
}

// The embeddings of the ids: the input of a stage that starts at layer 1.
Tensor embedded(const ModelSpec& model, const Tensor& ids) {
  Sequential embedding(model, 0, 1, kSeed, nullptr);
  return embedding.infer(ids, ForwardInfo{});
}

TEST(TransformerStack, BuildsTheModelsShapes) {
  Sequential stage(tiny_gpt(), 0, kLayers, kSeed, nullptr);
  EXPECT_EQ(stage.input_features(), kSeq);
  EXPECT_EQ(stage.output_features(), kSeq * kVocab);
  for (int k = 1; k < kLayers - 1; ++k) EXPECT_EQ(stage.layer(k).out_features(), kSeq * kDim);
  // Per-token layers hold one position's weights: a layernorm's 2 x dim, a linear's dim x vocab + vocab.
  const int64_t blocks = transformer_block_params({kSeq, kDim, 2, 12}) +
                         transformer_block_params({kSeq, kDim, 2, 12, NormType::RmsNorm,
                                                   BlockActivation::SwiGlu, false});
  EXPECT_EQ(stage.parameter_count(),
            (kVocab + kSeq) * kDim + blocks + 2 * kDim + kDim * kVocab + kVocab);
}

TEST(TransformerStack, GradientsMatchFiniteDifferences) {
  const ModelSpec model = tiny_gpt();
  const TokenBatch data = token_batch(3);
  const int64_t step_tokens = counted(data.mask);
  // Layers 1.. as a stage, so the stage input gets a gradient too.
  Sequential stage(model, 1, kLayers, kSeed, nullptr);
  Tensor x = embedded(model, data.ids);
  const StepResult step = run_step(stage, x, data, 1, false);
  const auto loss = [&] {
    return token_loss(stage.infer(x, ForwardInfo{}), data.labels, data.mask, step_tokens, nullptr)
        .loss;
  };
  // Embeddings are small (std 0.02) and the blocks normalise them: a small step.
  expect_gradient_matches(x, loss, step.input_grad, "stage input", 1e-3, 1e-3, 2e-2);
  const std::vector<Parameter> params = stage.parameters();
  ASSERT_EQ(params.size(), step.grads.size());
  for (size_t i = 0; i < params.size(); ++i)
    expect_gradient_matches(*params[i].value, loss, step.grads[i], "parameter " + std::to_string(i),
                            1e-2, 1e-3, 2e-2);

  // The embedding's tables, through the whole model.
  Sequential whole(model, 0, kLayers, kSeed, nullptr);
  const StepResult whole_step = run_step(whole, data.ids, data, 1, false);
  const auto whole_loss = [&] {
    return token_loss(whole.infer(data.ids, ForwardInfo{}), data.labels, data.mask, step_tokens,
                      nullptr)
        .loss;
  };
  const std::vector<Parameter> tables = whole.parameters();
  expect_gradient_matches(*tables[0].value, whole_loss, whole_step.grads[0], "token table", 1e-3,
                          1e-3, 2e-2);
  expect_gradient_matches(*tables[1].value, whole_loss, whole_step.grads[1], "position table",
                          1e-3, 1e-3, 2e-2);
}

TEST(TransformerStack, MicroBatchesSplitBackwardAndRecomputeGiveTheFullBatchGradient) {
  const ModelSpec model = tiny_gpt();
  const TokenBatch data = token_batch(4);
  Sequential stage(model, 0, kLayers, kSeed, nullptr);
  const StepResult full = run_step(stage, data.ids, data, 1, false);
  const StepResult micro = run_step(stage, data.ids, data, 4, false);
  const StepResult split = run_step(stage, data.ids, data, 4, true);
  const StepResult recomputed = run_step(stage, data.ids, data, 4, true, true);
  EXPECT_NEAR(full.loss_sum, micro.loss_sum, 1e-5);
  for (size_t i = 0; i < full.grads.size(); ++i) {
    EXPECT_LT(max_abs_difference(full.grads[i], micro.grads[i]), 1e-6) << "parameter " << i;
    EXPECT_TRUE(bitwise_equal(micro.grads[i], split.grads[i])) << "parameter " << i;
    EXPECT_TRUE(bitwise_equal(micro.grads[i], recomputed.grads[i])) << "parameter " << i;
  }
}

TEST(TransformerStack, PipelineStagesChainToTheWholeModel) {
  const ModelSpec model = tiny_gpt();
  const TokenBatch data = token_batch(2);
  Sequential whole(model, 0, kLayers, kSeed, nullptr);
  Sequential first(model, 0, 2, kSeed, nullptr);
  Sequential second(model, 2, kLayers, kSeed, nullptr);
  const Tensor expected = whole.infer(data.ids, ForwardInfo{});
  const Tensor actual = second.infer(first.infer(data.ids, ForwardInfo{}), ForwardInfo{});
  EXPECT_TRUE(bitwise_equal(expected, actual));
}

// Causal: the logits of a position never depend on the tokens after it, or
// next-token training would read its answers.
TEST(TransformerStack, EarlierPositionsDoNotSeeLaterTokens) {
  Sequential stage(tiny_gpt(), 0, kLayers, kSeed, nullptr);
  TokenBatch data = token_batch(2);
  const Tensor before = stage.infer(data.ids, ForwardInfo{});
  data.ids.at(1, kSeq - 1) = static_cast<float>((static_cast<int>(data.ids.at(1, kSeq - 1)) + 1) % kVocab);
  const Tensor after = stage.infer(data.ids, ForwardInfo{});
  for (int64_t c = 0; c < (kSeq - 1) * kVocab; ++c) {
    EXPECT_EQ(before.at(0, c), after.at(0, c));
    EXPECT_EQ(before.at(1, c), after.at(1, c)) << "logit " << c;
  }
  EXPECT_NE(before.at(1, (kSeq - 1) * kVocab), after.at(1, (kSeq - 1) * kVocab));
}

// A block's state is counted as Activations while it is kept, dropped by
// drop_activations, rebuilt bit for bit by recompute and freed by backward.
TEST(TransformerStack, BlockStatesAreCountedDroppedAndRebuilt) {
  DeviceAllocator allocator;
  const ModelSpec model = tiny_gpt();
  const TokenBatch data = token_batch(2);
  Sequential stage(model, 1, kLayers, kSeed, &allocator);
  const Tensor x = embedded(model, data.ids);
  const auto activation_bytes = [&] {
    return allocator.current()[static_cast<int>(MemoryCategory::Activations)];
  };
  StageActivations saved;
  const Tensor y = stage.forward(x.clone(&allocator, MemoryCategory::Activations), ForwardInfo{},
                                 saved);
  int64_t inputs = 0;
  for (const Tensor& input : saved.inputs) inputs += input.bytes();
  const int64_t kept = saved.bytes();
  EXPECT_GT(kept, inputs);  // the blocks keep more than their inputs
  ASSERT_TRUE(saved.states[0] && saved.states[1]);
  EXPECT_EQ(activation_bytes(), kept + y.bytes());

  stage.drop_activations(saved);
  EXPECT_EQ(saved.bytes(), x.bytes());
  EXPECT_EQ(activation_bytes(), x.bytes() + y.bytes());
  stage.recompute(saved);
  EXPECT_EQ(saved.bytes(), kept);

  Tensor grad;
  token_loss(y, data.labels, data.mask, counted(data.mask), &grad);
  const Tensor dx = stage.backward_input(std::move(grad), saved);
  // BI let go of what BW does not read, such as the attention probabilities.
  const auto& cache = static_cast<const GptBlockState&>(*saved.states[0]).cache;
  EXPECT_TRUE(cache.probabilities.empty());
  EXPECT_FALSE(cache.d_qkv.empty());
  stage.backward_weight(saved);
  EXPECT_EQ(saved.bytes(), 0);
  EXPECT_EQ(activation_bytes(), dx.bytes() + y.bytes());
}

TEST(TransformerStack, RejectsWhatItCannotBuild) {
  ModelSpec model = tiny_gpt();
  const auto error_of = [](const ModelSpec& spec, int tp = 1) {
    try {
      const int layers = static_cast<int>(spec.layers.size());
      // stage_profile's roles for this GPT (the embedding splits its vocabulary).
      using enum TensorParallelRole;
      std::vector<TensorParallelRole> roles = {VocabParallel, BlockParallel, BlockParallel,
                                               Replicated, ColumnParallel};
      roles.resize(spec.layers.size(), Replicated);
      for (const LayerLayout& layer : stack_layout(spec, 0, layers, {tp, 0, roles, true}))
        HostStackMath::build_layer(layer, kSeed, nullptr);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of(model, 2).find("tp = 2 does not divide the linear's output width 7"),
            std::string::npos)
      << error_of(model, 2);
  ModelSpec no_width = model;
  no_width.layers[0].dim = 0;
  EXPECT_NE(error_of(no_width).find("vocab (7) and dim (0) must both be > 0"), std::string::npos);
  ModelSpec no_embedding = model;
  no_embedding.layers.erase(no_embedding.layers.begin());
  EXPECT_NE(error_of(no_embedding).find("start the model with an embedding"), std::string::npos);
}

// Under sequence parallelism every layer from the embedding's output to the
// output layer's input holds one shard's positions; the output layer covers
// every position; a dropout's mask offset follows its positions.
TEST(TransformerStack, SequenceParallelLayoutSplitsThePositions) {
  ModelSpec model = testing::gpt_model({.seq = 4, .vocab = 8, .dim = 8, .heads = 2, .blocks = 1});
  LayerSpec drop;
  drop.type = LayerType::Dropout;
  drop.p = 0.1;
  model.layers.insert(model.layers.begin() + 2, drop);  // embedding, block, dropout, norm, head
  using enum TensorParallelRole;
  const std::vector<TensorParallelRole> roles = {VocabParallel, BlockParallel, Replicated, Replicated,
                                                 ColumnParallel};
  const std::vector<LayerLayout> layout = stack_layout(model, 0, 5, {2, 1, roles, true, true});
  EXPECT_EQ(layout[0].in, 4);           // every id
  EXPECT_EQ(layout[0].out, 2 * 8);      // two positions of 8 values
  EXPECT_EQ(layout[1].in, 2 * 8);
  EXPECT_EQ(layout[2].feature_offset, 2 * 8);  // shard 1 holds positions 2 and 3
  EXPECT_TRUE(layout[3].sequence_partial());
  EXPECT_FALSE(layout[1].sequence_partial());  // a block names its partial gradients itself
  EXPECT_TRUE(layout[4].gathers_sequence);
  EXPECT_EQ(layout[4].in, 2 * 8);
  EXPECT_EQ(layout[4].out, 4 * 4);      // every position, half the vocabulary

  // A linear pair between blocks is not split along the sequence.
  ModelSpec paired = model;
  LayerSpec linear;
  linear.type = LayerType::Linear;
  linear.out = 8;
  paired.layers.insert(paired.layers.begin() + 2, {linear, linear});
  std::vector<TensorParallelRole> paired_roles = roles;
  paired_roles.insert(paired_roles.begin() + 2, {ColumnParallel, RowParallel});
  try {
    stack_layout(paired, 0, 7, {2, 0, paired_roles, true, true});
    FAIL() << "a linear pair cannot be sequence parallel";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("set parallel.sequence_parallel = false"), std::string::npos)
        << error.what();
  }
  // Nor can tp = 3 split 4 positions.
  std::vector<TensorParallelRole> three = roles;
  try {
    stack_layout(model, 0, 5, {3, 0, three, true, true});
    FAIL() << "tp = 3 cannot split 4 positions";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("does not divide"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace pipelab
