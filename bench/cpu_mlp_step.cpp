// Benchmark: one training step of a 784-1024-1024-1024-10 ReLU MLP (batch 256,
// softmax cross-entropy, SGD with momentum 0.9) on PipeLab's CPU math, single-
// threaded. Prints one JSON line; bench/torch_mlp_step.py does the same step in
// PyTorch and bench/run_cpu_vs_torch.sh compares the two.
//
// Usage: cpu_mlp_step [steps=20] [warmup=3]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/model/model_spec.h"
#include "core/nn/blas_threads.h"
#include "core/nn/counter_rng.h"
#include "core/nn/loss.h"
#include "core/nn/optimizer.h"
#include "core/nn/sequential.h"

namespace {

using namespace pipelab;

constexpr int64_t kBatch = 256;
constexpr int64_t kInput = 784;
constexpr int64_t kClasses = 10;

ModelSpec mlp() {
  ModelSpec model;
  model.input = {kInput};
  for (int64_t width : {1024, 1024, 1024}) {
    model.layers.push_back({LayerType::Linear, width, true, 0.0});
    model.layers.push_back({LayerType::Relu, 0, true, 0.0});
  }
  model.layers.push_back({LayerType::Linear, kClasses, true, 0.0});
  return model;
}

// One step: forward, loss, backward, update. Returns the batch's mean loss.
double train_step(Sequential& net, Optimizer& optimizer, const Tensor& x,
                  const std::vector<int32_t>& labels, DeviceAllocator& allocator) {
  net.zero_grad();
  StageActivations saved;
  const Tensor logits =
      net.forward(x.clone(&allocator, MemoryCategory::Activations), ForwardInfo{}, saved);
  LossResult loss = softmax_cross_entropy(logits, labels, 1.0 / static_cast<double>(kBatch));
  net.backward(std::move(loss.grad), saved);
  optimizer.step();
  return loss.mean_loss();
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 20;
  const int warmup = argc > 2 ? std::atoi(argv[2]) : 3;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  if (steps < 1 || warmup < 0 || threads < 1) {
    std::fprintf(stderr, "usage: cpu_mlp_step [steps >= 1] [warmup >= 0] [threads >= 1]\n");
    return 2;
  }
  // GEMM threads: 1 is how each virtual device runs; more is the all-cores peer.
  set_blas_threads(threads);

  const ModelSpec model = mlp();
  DeviceAllocator allocator;
  Sequential net(model, 0, static_cast<int>(model.layers.size()), /*seed=*/1, &allocator);
  OptimizerSettings settings;
  settings.lr = 0.01;
  settings.momentum = 0.9;
  const std::unique_ptr<Optimizer> optimizer = make_optimizer(settings, net.parameters());

  // A fixed synthetic batch: pixels in [0, 1), labels cycling over the classes.
  Tensor x(kBatch, kInput, &allocator, MemoryCategory::Activations);
  for (int64_t i = 0; i < x.size(); ++i)
    x.data()[i] = unit_float(mix64(static_cast<uint64_t>(i) + 1));
  std::vector<int32_t> labels(kBatch);
  for (int64_t i = 0; i < kBatch; ++i) labels[i] = static_cast<int32_t>(i % kClasses);

  double loss = 0;
  for (int i = 0; i < warmup; ++i) loss = train_step(net, *optimizer, x, labels, allocator);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) loss = train_step(net, *optimizer, x, labels, allocator);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::printf(
      "{\"bench\": \"cpu_mlp_step\", \"model\": \"784-1024-1024-1024-10\", \"batch\": %lld, "
      "\"steps\": %d, "
      "\"threads\": %d, \"ms_per_step\": %.3f, \"final_loss\": %.6f, \"peak_bytes\": %lld}\n",
      static_cast<long long>(kBatch), steps, threads, 1000.0 * seconds / steps, loss,
      static_cast<long long>(allocator.peak_total()));
  return 0;
}
