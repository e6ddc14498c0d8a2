// A GpuTransformerBlock with experts at tp = 2 (each expert's FFN split as
// the dense MLP, core/nn/moe_layer.h) against the CPU's whole block: every
// shard's output and input gradient are the whole block's, and its gradients
// (attention half, gate, experts) the whole block's slices, with and without
// dropped tokens. The two shards run on one GPU in lockstep threads whose
// all-reduce goes through host copies. Skipped without a GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/nn/tensor_parallel.h"
#include "core/nn/transformer_block_layer.h"
#include "gpu/layers/device_context.h"
#include "gpu/device/device_guard.h"
#include "gpu/layers/transformer_block.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

using testing::expect_close_to_scale;
using testing::random_tensor;

constexpr int kTp = 2;
constexpr int64_t kSeq = 8, kBatch = 3, kDim = 16, kFfn = 32, kExperts = 4;
constexpr int kIndex = 1;
constexpr uint64_t kSeed = 7;

// The sum over kTp lockstep threads, through host copies. A shard whose
// thread ends calls leave(): a shard still waiting for it in an all-reduce
// then throws instead of waiting forever.
class LockstepAllReduce {
 public:
  LockstepAllReduce() : buffers_(kTp), barrier_(kTp) {}
  GpuLayer::InnerAllReduce for_shard(int shard) {
    return [this, shard](DeviceTensor& values, bool) {
      buffers_[shard] = values.to_vector();
      barrier_.arrive_and_wait();
      // Checked here only: a shard that finished its last all-reduce leaves
      // while the others may still be between its two barriers.
      if (left_) throw std::runtime_error("another shard ended before this all-reduce");
      std::vector<float> sum(buffers_[shard].size(), 0.0f);
      for (const std::vector<float>& from : buffers_)
        for (size_t i = 0; i < sum.size(); ++i) sum[i] += from[i];
      barrier_.arrive_and_wait();  // every shard has read every buffer
      values.copy_from_host(sum.data());
    };
  }
  void leave() {
    left_ = true;
    barrier_.arrive_and_drop();
  }

 private:
  std::vector<std::vector<float>> buffers_;
  std::barrier<> barrier_;
  std::atomic<bool> left_ = false;
};

GptBlockConfig experts_config() {
  GptBlockConfig config;
  config.dim = kDim;
  config.heads = 4;
  config.ffn_hidden = kFfn;
  config.dense_mlp = false;
  return config;
}

BlockExperts experts_of(double capacity_factor, int shard) {
  return {{kSeq, kDim, kExperts, 2, kFfn, capacity_factor}, 0.1, ExpertShard{1, 0, kTp, shard}};
}

// The whole block's gradients as shard k holds them, in GpuTransformerBlock::grads()'s order.
std::vector<std::vector<float>> sliced_gradients(TransformerBlockLayer& whole, int k) {
  std::vector<std::vector<float>> expected;
  GptBlockTensors block = slice_block_tensors(whole.block().gradients(), whole.block().config(),
                                              BlockShard{kTp, k, false});
  for (Tensor* t : block.list()) expected.push_back(t->to_vector());
  MoeLayer& moe = *whole.experts();
  expected.push_back(moe.gate_grad().to_vector());
  const int64_t width = kFfn / kTp, first = k * width;
  for (int64_t e = 0; e < kExperts; ++e) {
    MoeLayer::Expert& all = moe.expert(e);
    expected.push_back(copy_slice(all.w1_grad, {0, kDim, first, width}).to_vector());
    expected.push_back(copy_slice(all.b1_grad, {0, 1, first, width}).to_vector());
    expected.push_back(copy_slice(all.w2_grad, {first, width, 0, kDim}).to_vector());
    expected.push_back(all.b2_grad.to_vector());
  }
  return expected;
}

void expect_shards_match_the_cpu(double capacity_factor) {
  SCOPED_TRACE("capacity_factor " + std::to_string(capacity_factor));
  const BlockExperts whole_experts{{kSeq, kDim, kExperts, 2, kFfn, capacity_factor}, 0.1, {}};
  TransformerBlockLayer cpu(kIndex, experts_config(), BlockShard{}, kSeq, nullptr, &whole_experts);
  cpu.init(kSeed);
  const Tensor x = random_tensor(kBatch, kSeq * kDim, 1);
  const Tensor dy = random_tensor(kBatch, kSeq * kDim, 2);
  const ForwardInfo info;
  std::unique_ptr<LayerState> cpu_state;
  const std::vector<float> y_cpu = cpu.forward_keeping(x, info, cpu_state).to_vector();
  const std::vector<float> dx_cpu = cpu.backward_input_with(x, dy, info, cpu_state.get()).to_vector();
  cpu.backward_weight_with(x, dy, cpu_state.get());

  struct Shard {
    std::vector<float> y, dx;
    std::vector<std::vector<float>> grads;
  };
  std::vector<Shard> shards(kTp);
  std::vector<std::unique_ptr<DeviceContext>> contexts;
  for (int k = 0; k < kTp; ++k) contexts.push_back(std::make_unique<DeviceContext>(0));
  LockstepAllReduce all_reduce;
  const auto shard = [&](int k) {
    DeviceContext& context = *contexts[k];
    DeviceGuard guard(context.gpu());
    const BlockExperts experts = experts_of(capacity_factor, k);
    GpuTransformerBlock block(kIndex, experts_config(), BlockShard{kTp, k, false}, kSeq, kSeed,
                              context, &experts);
    block.connect_all_reduce(all_reduce.for_shard(k));
    const DeviceTensor x_device =
        DeviceTensor::from_host(x, &context.allocator(), MemoryCategory::Activations);
    const DeviceTensor dy_device =
        DeviceTensor::from_host(dy, &context.allocator(), MemoryCategory::Activations);
    std::unique_ptr<LayerState> state;
    shards[k].y = block.forward_keeping(x_device, info, state).to_vector();
    shards[k].dx = block.backward_input_with(x_device, dy_device, info, state.get()).to_vector();
    block.backward_weight_with(x_device, dy_device, state.get());
    for (DeviceTensor* grad : block.grads()) shards[k].grads.push_back(grad->to_vector());
  };
  testing::run_on_threads(kTp, shard, [&](int, bool) { all_reduce.leave(); });

  for (int k = 0; k < kTp; ++k) {
    const std::string shard = "shard " + std::to_string(k);
    expect_close_to_scale(shards[k].y, y_cpu, 1e-4, shard + " forward");
    expect_close_to_scale(shards[k].dx, dx_cpu, 1e-3, shard + " input gradient");
    const std::vector<std::vector<float>> expected = sliced_gradients(cpu, k);
    ASSERT_EQ(shards[k].grads.size(), expected.size()) << shard;
    for (size_t i = 0; i < expected.size(); ++i)
      expect_close_to_scale(shards[k].grads[i], expected[i], 1e-3, shard + " gradient " + std::to_string(i));
  }
}

TEST(MoeBlockTensorParallel, GpuShardsGiveTheCpuBlocksSlices) {
  PIPELAB_REQUIRE_GPU();
  expect_shards_match_the_cpu(4.0);
}

TEST(MoeBlockTensorParallel, GpuShardsGiveTheCpuBlocksSlicesWithDroppedTokens) {
  PIPELAB_REQUIRE_GPU();
  expect_shards_match_the_cpu(0.5);
}

}  // namespace
}  // namespace pipelab::gpu
