// Fused attention on the GPU (gpu/kernels/flash_attention.h) against the
// CPU's attention (core/nn/attention.h) on the same inputs: the float32
// kernels, and under bf16-mixed the tensor-core kernels, at head widths 16 to
// 128, causal and not, grouped-query and multi-query, with dropout, over
// sequences that end inside a 64-row tile. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/nn/attention.h"
#include "core/nn/block_dropout.h"
#include "core/nn/counter_rng.h"
#include "gpu/kernels/bf16_math.h"
#include "gpu/layers/attention.h"
#include "gpu/layers/cublas_gemm.h"
#include "gpu/layers/device_context.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

struct FusedCase {
  std::string name;
  int64_t head_dim, heads, kv_heads, seq;
  bool causal;
  float dropout;
};

std::vector<float> rounded_to_bf16(std::vector<float> values) {
  for (float& v : values) v = bf16_math::bf16_bits_to_float(bf16_math::to_bf16_bits(v));
  return values;
}

// Runs the fused path (no probabilities kept) on the GPU and the CPU's
// attention on the same values (rounded to bf16 first under bf16-mixed: the
// GPU then reads them so), and compares the output and dqkv within
// `tolerance` of their largest values.
void expect_fused_matches_cpu(const FusedCase& c, bool mixed, double tolerance) {
  const testing::FusedAttentionSwitch fused(true);
  DeviceContext context(0);
  context.set_mixed_bf16(mixed);
  AttentionShape shape;
  shape.batch = 2;
  shape.seq = c.seq;
  shape.heads = c.heads;
  shape.kv_heads = c.kv_heads;
  shape.head_dim = c.head_dim;
  shape.causal = c.causal;
  shape.first_head = 1;
  ASSERT_TRUE(uses_fused_attention(shape, false, mixed)) << c.name;
  BlockDropout dropout;
  dropout.p = c.dropout;
  dropout.seed = 9;
  dropout.layer = 2;
  dropout.step = 3;
  dropout.first_sample = 5;
  BlockDropoutKey key;
  key.layer_key = layer_key(dropout.seed, RandomStream::Dropout, dropout.layer);
  key.step = dropout.step;
  key.first_sample = dropout.first_sample;
  key.p = dropout.p;
  key.scale = dropout.scale();

  const Tensor qkv = testing::random_tensor(shape.rows(), shape.qkv_width(), 21, 1.0);
  const Tensor dout = testing::random_tensor(shape.rows(), shape.width(), 22, 1.0);
  std::vector<float> qkv_values = qkv.to_vector(), dout_values = dout.to_vector();
  if (mixed) qkv_values = rounded_to_bf16(qkv_values);
  Tensor out(shape.rows(), shape.width()), dqkv(shape.rows(), shape.qkv_width());
  const Tensor qkv_host = Tensor::from_values(shape.rows(), shape.qkv_width(), qkv_values);
  attention_forward(qkv_host, shape, out, nullptr, &dropout);
  attention_backward(qkv_host, nullptr, dout, shape, dqkv, &dropout);

  CachingAllocator* a = &context.allocator();
  const DeviceTensor qkv_device =
      DeviceTensor::from_values(shape.rows(), shape.qkv_width(), qkv_values, a);
  const DeviceTensor dout_device =
      DeviceTensor::from_values(shape.rows(), shape.width(), dout_values, a);
  DeviceTensor out_device(shape.rows(), shape.width(), a),
      dqkv_device(shape.rows(), shape.qkv_width(), a);
  dqkv_device.fill(-3.0f);  // every element is written
  gpu_attention_forward(context, qkv_device, shape, out_device, nullptr, &key);
  gpu_attention_backward(context, qkv_device, nullptr, dout_device, shape, dqkv_device, &key);
  testing::expect_close_to_scale(out_device.to_vector(), out.to_vector(), tolerance,
                                 c.name + " out");
  testing::expect_close_to_scale(dqkv_device.to_vector(), dqkv.to_vector(), tolerance,
                                 c.name + " dqkv");

  // With the lse kept (as a block keeps it) the backward runs no second
  // forward: the same bits from the float32 output, and within the tolerance
  // from the output rounded to bf16 (what a bf16-mixed block keeps of it).
  DeviceTensor lse(shape.probability_rows(), 1, a), out_kept(shape.rows(), shape.width(), a),
      dqkv_kept(shape.rows(), shape.qkv_width(), a);
  gpu_attention_forward(context, qkv_device, shape, out_kept, nullptr, &key, &lse);
  EXPECT_EQ(out_kept.to_vector(), out_device.to_vector()) << c.name;
  const FusedKept from_float{&lse, {out_kept.data(), nullptr}};
  gpu_attention_backward(context, qkv_device, nullptr, dout_device, shape, dqkv_kept, &key,
                         &from_float);
  EXPECT_EQ(dqkv_kept.to_vector(), dqkv_device.to_vector()) << c.name << ", lse kept";
  if (!mixed) return;
  const RoundedGemmInput out_bf16(out_kept.data(), out_kept.size(), true, a);
  const FusedKept from_bf16{&lse, out_bf16.at()};
  gpu_attention_backward(context, qkv_device, nullptr, dout_device, shape, dqkv_kept, &key,
                         &from_bf16);
  testing::expect_close_to_scale(dqkv_kept.to_vector(), dqkv.to_vector(), tolerance,
                                 c.name + " dqkv, lse and bf16 output kept");
}

const std::vector<FusedCase>& cases() {
  static const std::vector<FusedCase> all = {
      {"width 16, causal", 16, 4, 0, 70, true, 0.0f},
      {"width 32, grouped, causal, dropout", 32, 4, 2, 130, true, 0.1f},
      {"width 64, causal", 64, 2, 0, 130, true, 0.0f},
      {"width 64, multi-query, not causal, dropout", 64, 4, 1, 70, false, 0.2f},
  };
  return all;
}

// The float32 kernels, as the CPU to reassociation: widths up to 64.
TEST(FusedAttentionTest, Float32KernelsMatchTheCpu) {
  PIPELAB_REQUIRE_GPU();
  for (const FusedCase& c : cases()) expect_fused_matches_cpu(c, false, 1e-4);
}

// The tensor-core kernels round P, dS and dO to bf16 (2^-9 relative each)
// as the unfused bf16 products do: within 1e-2 of each result's scale.
TEST(FusedAttentionTest, TensorCoreKernelsMatchTheCpuUnderBf16Mixed) {
  PIPELAB_REQUIRE_GPU();
  for (const FusedCase& c : cases()) expect_fused_matches_cpu(c, true, 1e-2);
  expect_fused_matches_cpu({"width 128, grouped, causal", 128, 4, 2, 200, true, 0.0f}, true, 1e-2);
  expect_fused_matches_cpu({"width 128, not causal, dropout", 128, 2, 0, 64, false, 0.1f}, true,
                           1e-2);
  // Four tiles a side: six of the ten causal tiles are seen whole (no mask
  // tested), the diagonal four masked, with dropout in both.
  expect_fused_matches_cpu(
      {"width 64, grouped, causal, dropout, 4 tiles", 64, 4, 2, 256, true, 0.1f}, true, 1e-2);
}

// Without a kept P the fused path takes the widths each kernel family has
// where that family is switched on: by default the tensor-core kernels alone
// (bf16-mixed); it falls back to the unfused path elsewhere, when P is kept,
// and when switched off.
TEST(FusedAttentionTest, ChosenForTheWidthsItTakesWhenSwitchedOn) {
  AttentionShape shape;
  shape.batch = 1;
  shape.seq = 8;
  shape.heads = 2;
  shape.head_dim = 64;
  {
    const testing::FusedAttentionSwitch off(false);
    EXPECT_FALSE(uses_fused_attention(shape, false, true));
  }
  {
    const testing::FusedAttentionSwitch tensor_cores(FusedAttention::TensorCores);
    EXPECT_TRUE(uses_fused_attention(shape, false, true));
    EXPECT_FALSE(uses_fused_attention(shape, true, true));  // P kept
    EXPECT_FALSE(uses_fused_attention(shape, false));       // float32
    shape.head_dim = 8;
    EXPECT_FALSE(uses_fused_attention(shape, false, true));  // too narrow for the tensor cores
    shape.head_dim = 64;
  }
  const testing::FusedAttentionSwitch on(true);
  for (const int64_t width : {8, 16, 32, 64}) {
    shape.head_dim = width;
    EXPECT_TRUE(uses_fused_attention(shape, false)) << width;
    EXPECT_FALSE(uses_fused_attention(shape, true)) << width;
  }
  shape.head_dim = 128;
  EXPECT_FALSE(uses_fused_attention(shape, false));  // float32: not taken
  EXPECT_TRUE(uses_fused_attention(shape, false, true));
  shape.head_dim = 24;
  EXPECT_FALSE(uses_fused_attention(shape, false, true));
}

}  // namespace
}  // namespace pipelab::gpu
