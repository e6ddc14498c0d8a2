// Benchmark: one training step (forward, next-token cross-entropy, backward,
// Adam update) of a small GPT on PipeLab's CPU math, on one thread:
//   embedding (vocab 256, width 256, learned positions), 4 pre-norm blocks
//   (8 heads, ffn 1024, causal, layernorm, GELU, bias, no dropout), a final
//   layernorm and a linear to the vocabulary; batch 8 sequences of 128 tokens.
// The model is a ModelSpec built as the executor builds a stage (Sequential
// over model layers [0, n)), and the loss is token_cross_entropy over every
// position, as the executor's sequence-model loss. Prints one JSON line with
// the median step time after warm-up; bench/torch_transformer_step.py does the
// same step in PyTorch and bench/run_transformer_vs_torch.sh compares them.
// Besides wall time it reports the process's CPU time per step, which a
// machine loaded by other work stretches far less.
//
// Usage: cpu_transformer_step [steps=20] [warmup=3] [threads=1]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <vector>

#include "core/model/model_spec.h"
#include "core/nn/blas_threads.h"
#include "core/nn/counter_rng.h"
#include "core/nn/optimizer.h"
#include "core/nn/sequential.h"
#include "core/nn/token_cross_entropy.h"

namespace {

using namespace pipelab;

constexpr int64_t kBatch = 8;
constexpr int64_t kSeq = 128;
constexpr int64_t kVocab = 256;
constexpr int64_t kDim = 256;
constexpr int64_t kHeads = 8;
constexpr int64_t kFfn = 1024;
constexpr int kBlocks = 4;

ModelSpec small_gpt() {
  ModelSpec model;
  model.input = {kSeq};
  LayerSpec embedding;
  embedding.type = LayerType::Embedding;
  embedding.vocab = kVocab;
  embedding.dim = kDim;
  model.layers.push_back(embedding);
  LayerSpec block;
  block.type = LayerType::TransformerBlock;
  block.heads = kHeads;
  block.ffn = kFfn;
  block.causal = true;
  block.norm = NormType::LayerNorm;
  block.activation = BlockActivation::Gelu;
  block.dropout = 0.0;
  block.bias = true;
  for (int i = 0; i < kBlocks; ++i) model.layers.push_back(block);
  LayerSpec norm;
  norm.type = LayerType::LayerNorm;
  model.layers.push_back(norm);
  LayerSpec head;
  head.type = LayerType::Linear;
  head.out = kVocab;
  model.layers.push_back(head);
  model.loss = LossType::CrossEntropy;
  return model;
}

double process_cpu_ms() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return 1e3 * static_cast<double>(now.tv_sec) + 1e-6 * static_cast<double>(now.tv_nsec);
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// One step: forward, loss, backward, update. Returns the mean token loss.
double train_step(Sequential& net, Optimizer& optimizer, const Tensor& tokens,
                  const std::vector<int32_t>& labels, DeviceAllocator& allocator) {
  net.zero_grad();
  StageActivations saved;
  Tensor logits =
      net.forward(tokens.clone(&allocator, MemoryCategory::Activations), ForwardInfo{}, saved);
  // [batch, seq * vocab] is [batch * seq, vocab] row-major: one row per position.
  const int64_t positions = kBatch * kSeq;
  logits.reshape(positions, kVocab);
  Tensor grad(positions, kVocab, &allocator, MemoryCategory::Activations);
  const TokenLoss loss = token_cross_entropy(logits, labels, {}, &grad);
  grad.reshape(kBatch, kSeq * kVocab);
  logits.reset();
  net.backward(std::move(grad), saved);
  optimizer.step();
  return loss.loss;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 20;
  const int warmup = argc > 2 ? std::atoi(argv[2]) : 3;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  if (steps < 1 || warmup < 0 || threads < 1) {
    std::fprintf(stderr,
                 "usage: cpu_transformer_step [steps >= 1] [warmup >= 0] [threads >= 1]\n");
    return 2;
  }
  // GEMM threads: 1 is how each virtual device runs.
  set_blas_threads(threads);

  const ModelSpec model = small_gpt();
  DeviceAllocator allocator;
  Sequential net(model, 0, static_cast<int>(model.layers.size()), /*seed=*/1, &allocator);
  OptimizerSettings settings;
  settings.type = OptimizerType::Adam;
  settings.lr = 1e-3;
  const std::unique_ptr<Optimizer> optimizer = make_optimizer(settings, net.parameters());

  // Random token sequences of kSeq + 1: the first kSeq are the input (ids
  // stored as floats, as the data sets keep them), each position's label is
  // the token after it.
  Tensor tokens(kBatch, kSeq, &allocator, MemoryCategory::Activations);
  std::vector<int32_t> labels(static_cast<size_t>(kBatch * kSeq));
  for (int64_t b = 0; b < kBatch; ++b) {
    std::vector<int32_t> sequence(kSeq + 1);
    for (int64_t t = 0; t <= kSeq; ++t)
      sequence[t] = static_cast<int32_t>(
          mix64(static_cast<uint64_t>(b * (kSeq + 1) + t) + 1) % static_cast<uint64_t>(kVocab));
    for (int64_t t = 0; t < kSeq; ++t) {
      tokens.row(b)[t] = static_cast<float>(sequence[t]);
      labels[static_cast<size_t>(b * kSeq + t)] = sequence[t + 1];
    }
  }

  double first_loss = 0;
  double loss = 0;
  for (int i = 0; i < warmup; ++i) {
    loss = train_step(net, *optimizer, tokens, labels, allocator);
    if (i == 0) first_loss = loss;
  }
  std::vector<double> ms(static_cast<size_t>(steps));
  std::vector<double> cpu_ms(static_cast<size_t>(steps));
  for (int i = 0; i < steps; ++i) {
    const double cpu_start = process_cpu_ms();
    const auto start = std::chrono::steady_clock::now();
    loss = train_step(net, *optimizer, tokens, labels, allocator);
    ms[static_cast<size_t>(i)] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    cpu_ms[static_cast<size_t>(i)] = process_cpu_ms() - cpu_start;
    if (i == 0 && warmup == 0) first_loss = loss;
  }
  double total = 0;
  for (double t : ms) total += t;

  std::printf(
      "{\"bench\": \"cpu_transformer_step\", \"model\": \"gpt vocab %lld dim %lld blocks %d heads "
      "%lld ffn %lld\", \"batch\": %lld, \"seq\": %lld, \"steps\": %d, \"threads\": %d, "
      "\"params\": %lld, \"median_ms\": %.3f, \"mean_ms\": %.3f, \"min_ms\": %.3f, "
      "\"cpu_median_ms\": %.3f, "
      "\"first_loss\": %.6f, \"final_loss\": %.6f, \"peak_bytes\": %lld}\n",
      static_cast<long long>(kVocab), static_cast<long long>(kDim), kBlocks,
      static_cast<long long>(kHeads), static_cast<long long>(kFfn),
      static_cast<long long>(kBatch), static_cast<long long>(kSeq), steps, threads,
      static_cast<long long>(net.parameter_count()), median_of(ms),
      total / static_cast<double>(steps), *std::min_element(ms.begin(), ms.end()),
      median_of(cpu_ms), first_loss, loss, static_cast<long long>(allocator.peak_total()));
  return 0;
}
