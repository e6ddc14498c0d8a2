// Benchmark: training steps of a ReLU MLP on PipeLab's CUDA math (GpuSequential,
// softmax cross-entropy, SGD with momentum 0.9; one device, a plain forward /
// backward / update loop, no executor), beside a bare cuBLAS SGEMM of the
// step's matrix products: the GEMMs are the floor a step cannot beat, so
// gemm_fraction = gemm_ms / ms_per_step says how close the stack gets to it.
// Prints one JSON line; bench/torch_gpu_mlp_step.py does the same step in
// PyTorch and bench/run_gpu_vs_torch.sh compares the two.
//
//   small  784-1024-1024-10,     batch 256
//   large  8192-8192-8192-10,    batch 8192
//
// bf16-mixed: the stack's linear products read bf16 weight copies and bf16
// inputs with float32 accumulation (cublas_gemm.h); the floor then is the
// same products as bare bf16 GEMMs.
//
// Usage: gpu_mlp_step [small|large] [fp32|tf32|bf16-mixed] [steps=20] [warmup=3]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model_spec.h"
#include "core/nn/counter_rng.h"
#include "gpu/layers/device_context.h"
#include "gpu/device/device_query.h"
#include "gpu/kernels/bf16.h"
#include "gpu/layers/cublas_gemm.h"
#include "gpu/layers/loss.h"
#include "gpu/layers/optimizer.h"
#include "gpu/layers/sequential.h"

namespace {

using namespace pipelab;
using namespace pipelab::gpu;
using Clock = std::chrono::steady_clock;

struct MlpShape {
  const char* name;
  int64_t input;
  std::vector<int64_t> hidden;
  int64_t classes;
  int64_t batch;
};

const MlpShape kSmall{"784-1024-1024-10", 784, {1024, 1024}, 10, 256};
const MlpShape kLarge{"8192-8192-8192-10", 8192, {8192, 8192}, 10, 8192};

ModelSpec mlp(const MlpShape& shape) {
  ModelSpec model;
  model.input = {shape.input};
  for (int64_t width : shape.hidden) {
    model.layers.push_back({LayerType::Linear, width, true, 0.0});
    model.layers.push_back({LayerType::Relu, 0, true, 0.0});
  }
  model.layers.push_back({LayerType::Linear, shape.classes, true, 0.0});
  return model;
}

// One linear layer's [in, out].
struct LinearShape {
  int64_t in;
  int64_t out;
};

std::vector<LinearShape> linears(const MlpShape& shape) {
  std::vector<LinearShape> result;
  int64_t in = shape.input;
  for (int64_t width : shape.hidden) {
    result.push_back({in, width});
    in = width;
  }
  result.push_back({in, shape.classes});
  return result;
}

// FLOPs of a step's GEMMs: forward and weight gradient of every linear, input
// gradient of all but the first (the data needs none), 2 per multiply-add.
double step_gemm_flops(const MlpShape& shape) {
  double flops = 0;
  const std::vector<LinearShape> layers = linears(shape);
  for (size_t i = 0; i < layers.size(); ++i) {
    const double one = 2.0 * static_cast<double>(shape.batch) * static_cast<double>(layers[i].in) *
                       static_cast<double>(layers[i].out);
    flops += (i == 0 ? 2.0 : 3.0) * one;
  }
  return flops;
}

// A bf16 copy of a tensor's values, for the bare bf16 GEMMs.
DeviceBuffer bf16_of(const DeviceTensor& tensor) {
  DeviceBuffer copy(tensor.size() * static_cast<int64_t>(sizeof(uint16_t)), tensor.allocator(),
                    MemoryCategory::Workspace);
  kernels::to_bf16(tensor.data(), copy.as<uint16_t>(), tensor.size(), tensor.stream());
  return copy;
}

// The same products as a step, as bare cuBLAS calls on preallocated matrices
// (mixed: in bf16, float32 out): milliseconds per step.
double bare_gemm_ms(DeviceContext& context, const MlpShape& shape, bool mixed, int steps,
                    int warmup) {
  struct Operands {
    DeviceTensor x, w, y, dy, dx, dw;
    DeviceBuffer x16, w16, dy16;  // mixed only
  };
  std::vector<Operands> operands;
  CachingAllocator* a = &context.allocator();
  for (const LinearShape& layer : linears(shape)) {
    Operands o;
    o.x = DeviceTensor(shape.batch, layer.in, a);
    o.w = DeviceTensor(layer.in, layer.out, a);
    o.y = DeviceTensor(shape.batch, layer.out, a);
    o.dy = DeviceTensor(shape.batch, layer.out, a);
    o.dx = DeviceTensor(shape.batch, layer.in, a);
    o.dw = DeviceTensor(layer.in, layer.out, a);
    o.x.fill(0.5f);
    o.w.fill(0.01f);
    o.dy.fill(0.001f);
    if (mixed) {
      o.x16 = bf16_of(o.x);
      o.w16 = bf16_of(o.w);
      o.dy16 = bf16_of(o.dy);
    }
    operands.push_back(std::move(o));
  }
  const auto whole = [](const DeviceTensor& t) {
    return BatchedOperand{t.rows(), t.cols(), t.cols(), 0};
  };
  auto one_step = [&] {
    for (size_t i = 0; i < operands.size(); ++i) {
      Operands& o = operands[i];
      if (mixed) {
        bf16_gemm(context.cublas(), o.x16.as<uint16_t>(), whole(o.x), false, o.w16.as<uint16_t>(),
                  whole(o.w), false, o.y.data(), whole(o.y), 1.0f, 0.0f);
        if (i > 0)
          bf16_gemm(context.cublas(), o.dy16.as<uint16_t>(), whole(o.dy), false,
                    o.w16.as<uint16_t>(), whole(o.w), true, o.dx.data(), whole(o.dx), 1.0f, 0.0f);
        bf16_gemm(context.cublas(), o.x16.as<uint16_t>(), whole(o.x), true, o.dy16.as<uint16_t>(),
                  whole(o.dy), false, o.dw.data(), whole(o.dw), 1.0f, 1.0f);
      } else {
        gemm(context.cublas(), o.x, false, o.w, false, o.y, 1.0f, 0.0f);
        if (i > 0) gemm(context.cublas(), o.dy, false, o.w, true, o.dx, 1.0f, 0.0f);
        gemm(context.cublas(), o.x, true, o.dy, false, o.dw, 1.0f, 1.0f);
      }
    }
  };
  for (int i = 0; i < warmup; ++i) one_step();
  context.synchronize();
  const auto start = Clock::now();
  for (int i = 0; i < steps; ++i) one_step();
  context.synchronize();
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count() / steps;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string size = argc > 1 ? argv[1] : "small";
  const std::string precision_name = argc > 2 ? argv[2] : "fp32";
  const int steps = argc > 3 ? std::atoi(argv[3]) : 20;
  const int warmup = argc > 4 ? std::atoi(argv[4]) : 3;
  const bool mixed = precision_name == "bf16-mixed";
  const std::optional<GemmPrecision> precision =
      mixed ? GemmPrecision::Fp32 : parse_gemm_precision(precision_name);
  if ((size != "small" && size != "large") || !precision || steps < 1 || warmup < 0) {
    std::fprintf(stderr,
                 "usage: gpu_mlp_step [small|large] [fp32|tf32|bf16-mixed] [steps >= 1] "
                 "[warmup >= 0]\n");
    return 2;
  }
  const GpuInventory inventory = query_gpus();
  if (inventory.gpus.empty()) {
    std::printf("{\"bench\": \"gpu_mlp_step\", \"skipped\": \"%s\"}\n",
                inventory.unavailable_reason.c_str());
    return 0;
  }
  const MlpShape& shape = size == "small" ? kSmall : kLarge;
  try {
    DeviceContext context(0, *precision);
    context.make_current();
    context.set_mixed_bf16(mixed);
    const ModelSpec model = mlp(shape);
    GpuSequential net(model, 0, static_cast<int>(model.layers.size()), /*seed=*/1, context);
    OptimizerSettings settings;
    settings.lr = 0.01;
    settings.momentum = 0.9;
    const std::unique_ptr<GpuOptimizer> optimizer = make_gpu_optimizer(settings, net.parameters());

    // A fixed synthetic batch: pixels in [0, 1), labels cycling over the classes.
    std::vector<float> pixels(static_cast<size_t>(shape.batch * shape.input));
    for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = unit_float(mix64(i + 1));
    const DeviceTensor x =
        DeviceTensor::from_values(shape.batch, shape.input, pixels, &context.allocator());
    std::vector<int32_t> labels(static_cast<size_t>(shape.batch));
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int32_t>(i % shape.classes);
    const DeviceBuffer device_labels =
        upload_labels(labels, shape.batch, shape.classes, context.allocator());

    GpuLossResult last_loss;
    auto train_step = [&] {
      net.zero_grad();
      GpuStageActivations saved;
      const DeviceTensor logits = net.forward(x.clone(MemoryCategory::Activations), {}, saved);
      last_loss =
          gpu_softmax_cross_entropy(logits, device_labels, 1.0 / static_cast<double>(shape.batch));
      net.backward(std::move(last_loss.grad), saved);
      optimizer->step();
    };
    for (int i = 0; i < warmup; ++i) train_step();
    context.synchronize();
    const auto start = Clock::now();
    for (int i = 0; i < steps; ++i) train_step();
    context.synchronize();
    const double step_ms =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count() / steps;
    const double loss = last_loss.totals().mean_loss();
    const int64_t peak_bytes = context.allocator().peak_total();
    last_loss = GpuLossResult{};

    const double gemm_ms = bare_gemm_ms(context, shape, mixed, steps, warmup);
    const double flops = step_gemm_flops(shape);
    std::printf(
        "{\"bench\": \"gpu_mlp_step\", \"model\": \"%s\", \"batch\": %lld, \"precision\": \"%s\", "
        "\"steps\": %d, \"gpu\": \"%s\", \"ms_per_step\": %.3f, \"tflops\": %.2f, "
        "\"gemm_ms_per_step\": %.3f, \"gemm_tflops\": %.2f, \"gemm_fraction\": %.3f, "
        "\"final_loss\": %.6f, \"peak_bytes\": %lld}\n",
        shape.name, static_cast<long long>(shape.batch), precision_name.c_str(), steps,
        inventory.gpus[0].name.c_str(), step_ms, flops / (step_ms * 1e9), gemm_ms,
        flops / (gemm_ms * 1e9), gemm_ms / step_ms, loss, static_cast<long long>(peak_bytes));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gpu_mlp_step: %s\n", error.what());
    return 1;
  }
  return 0;
}
