// Benchmark: the attention core of GPT-2 small's 12 blocks (12 heads of
// width 64, causal, sequence 1024), forward and backward, on the CUDA
// backend's attention (gpu/layers/attention.h) in one of three ways:
//   kept       the unfused path keeping P between forward and backward
//              (PipeLab's default without recompute)
//   recompute  nothing kept, the unfused path recomputing P (selective
//              recompute's default)
//   fused      the fused kernels (tensor cores under bf16-mixed), keeping each
//              row's lse and the output for the backward, as a block does
//   fused-again  the fused kernels keeping nothing: the backward runs the
//              forward again for its lse and output
// Prints one JSON line with the median time of the 12 blocks' forward and
// backward, whether the fused kernels ran, and the memory the attention took
// at its peak. bench/run_gpt2_vs_torch.sh runs it beside PyTorch's
// scaled_dot_product_attention on the same shape.
//
// Usage: gpu_attention_step [batch=4] [fp32|bf16-mixed] [kept|recompute|fused|fused-again]
//        [repeats=10]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_query.h"
#include "gpu/layers/attention.h"
#include "gpu/layers/device_context.h"
#include "gpu/memory/device_tensor.h"

namespace {

using namespace pipelab;
using namespace pipelab::gpu;

constexpr int kBlocks = 12;

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t batch = argc > 1 ? std::atoll(argv[1]) : 4;
  const std::string precision = argc > 2 ? argv[2] : "fp32";
  const std::string mode = argc > 3 ? argv[3] : "kept";
  const int repeats = argc > 4 ? std::atoi(argv[4]) : 10;
  if (batch < 1 || (precision != "fp32" && precision != "bf16-mixed") ||
      (mode != "kept" && mode != "recompute" && mode != "fused" && mode != "fused-again") ||
      repeats < 1) {
    std::fprintf(stderr,
                 "usage: gpu_attention_step [batch >= 1] [fp32|bf16-mixed] "
                 "[kept|recompute|fused|fused-again] [repeats >= 1]\n");
    return 2;
  }
  const GpuInventory inventory = query_gpus();
  if (inventory.gpus.empty()) {
    std::printf("{\"bench\": \"gpu_attention_step\", \"skipped\": \"%s\"}\n",
                inventory.unavailable_reason.c_str());
    return 0;
  }
  AttentionShape shape;
  shape.batch = batch;
  shape.seq = 1024;
  shape.heads = 12;
  shape.head_dim = 64;
  shape.causal = true;
  const bool kept = mode == "kept";
  const bool fused = mode == "fused" || mode == "fused-again";
  set_fused_attention_mode(fused ? FusedAttention::All : FusedAttention::Off);
  try {
    DeviceContext context(0);
    context.make_current();
    context.set_mixed_bf16(precision == "bf16-mixed");
    CachingAllocator* a = &context.allocator();
    DeviceTensor qkv(shape.rows(), shape.qkv_width(), a), out(shape.rows(), shape.width(), a);
    DeviceTensor dout(shape.rows(), shape.width(), a), dqkv(shape.rows(), shape.qkv_width(), a);
    qkv.fill(0.02f);
    dout.fill(0.001f);
    DeviceTensor probabilities;
    if (kept) probabilities = DeviceTensor(shape.probability_rows(), shape.seq, a);
    DeviceTensor* p = kept ? &probabilities : nullptr;
    DeviceTensor lse;
    if (mode == "fused") lse = DeviceTensor(shape.probability_rows(), 1, a);
    DeviceTensor* kept_lse = lse.empty() ? nullptr : &lse;
    const FusedKept from_forward{kept_lse, {out.data(), nullptr}};
    const auto blocks = [&] {
      for (int block = 0; block < kBlocks; ++block) {
        gpu_attention_forward(context, qkv, shape, out, p, nullptr, kept_lse);
        gpu_attention_backward(context, qkv, p, dout, shape, dqkv, nullptr,
                               kept_lse ? &from_forward : nullptr);
      }
    };
    blocks();  // warm-up: the allocator's blocks, cuBLAS's workspaces
    context.synchronize();
    const int64_t before = a->peak_total();
    cudaEvent_t start = nullptr, end = nullptr;
    PIPELAB_CUDA_CHECK(cudaEventCreate(&start));
    PIPELAB_CUDA_CHECK(cudaEventCreate(&end));
    std::vector<double> ms;
    for (int r = 0; r < repeats; ++r) {
      PIPELAB_CUDA_CHECK(cudaEventRecord(start, context.stream()));
      blocks();
      PIPELAB_CUDA_CHECK(cudaEventRecord(end, context.stream()));
      PIPELAB_CUDA_CHECK(cudaEventSynchronize(end));
      float elapsed = 0;
      PIPELAB_CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, end));
      ms.push_back(elapsed);
    }
    PIPELAB_CUDA_CHECK(cudaEventDestroy(start));
    PIPELAB_CUDA_CHECK(cudaEventDestroy(end));
    std::printf(
        "{\"bench\": \"gpu_attention_step\", \"gpu\": \"%s\", \"batch\": %lld, \"seq\": %lld, "
        "\"heads\": %lld, \"head_dim\": %lld, \"precision\": \"%s\", \"mode\": \"%s\", "
        "\"fused\": %s, \"blocks\": %d, \"median_ms\": %.3f, \"peak_bytes\": %lld}\n",
        inventory.gpus.front().name.c_str(), static_cast<long long>(batch),
        static_cast<long long>(shape.seq), static_cast<long long>(shape.heads),
        static_cast<long long>(shape.head_dim), precision.c_str(), mode.c_str(),
        uses_fused_attention(shape, kept, context.mixed_bf16()) ? "true" : "false", kBlocks,
        median_of(ms), static_cast<long long>(std::max(before, a->peak_total())));
  } catch (const std::exception& error) {
    std::printf("{\"bench\": \"gpu_attention_step\", \"error\": \"%s\"}\n", error.what());
    return 1;
  }
  return 0;
}
