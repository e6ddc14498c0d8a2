// Every layer op of the CUDA backend against the CPU reference, from one
// table of cases with per-op tolerances (as llama.cpp's test-backend-ops
// does): forward, the input gradient (BI) and the weight gradients (BW, twice,
// so accumulation is checked too), each layer built by the one stage-stack
// template on both backends from the same model slice and seed. The CPU
// reference itself is checked by finite differences (tests/core/nn).
// Sequence-model layers (embedding, per-token linear and layer norm,
// Transformer blocks) run in a small GPT whose layer 0 is an embedding; image
// layers (convolutions, pools, batch norm, residual blocks) on small odd-sized
// images; moe layers and blocks with experts with top-1 and top-2 routing,
// with and without dropped assignments; LLaMA's grouped-query and multi-query
// attention with rotary positions. Skipped without a GPU.
#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/nn/sequential.h"
#include "gpu/layers/device_context.h"
#include "gpu/layers/sequential.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

using testing::expect_close_to_scale;
using testing::random_tensor;

struct OpCase {
  std::string name;
  LayerSpec layer;
  int64_t in = 0;  // input width
  int64_t batch = 0;
  GemmPrecision precision = GemmPrecision::Fp32;
  double forward_tolerance = 0;   // relative to the largest expected value
  double backward_tolerance = 0;  // dx and weight gradients, likewise
  // Sequence models: the case's layer follows an embedding of `vocab` ids into
  // `in` values per position, over `seq` positions (0: not a sequence model).
  int64_t seq = 0;
  int64_t vocab = 0;
  bool embedding_itself = false;     // the stack is the embedding (ids in, no dx)
  bool selective_recompute = false;  // blocks keep no attention probabilities
  bool fused_attention = false;      // with selective recompute: the fused kernels
  // Image layers: model.input = [channels, height, width] (empty: flat `in`).
  std::vector<int64_t> image = {};
  // moe: the capacity is tight enough that some assignments are dropped.
  bool drops = false;
  // Sequence models: rotary positions (the embedding says position = rope).
  bool rotary = false;
};

// gtest prints a case by its name (not its bytes) in listings and failures.
void PrintTo(const OpCase& op, std::ostream* out) { *out << op.name; }

// A transformer_block spec: 4 heads of a 32-wide model unless changed.
LayerSpec block(bool causal, NormType norm, BlockActivation activation, double dropout,
                bool bias = true) {
  LayerSpec spec{LayerType::TransformerBlock, 0, bias, 0.0};
  spec.heads = 4;
  spec.ffn = 48;
  spec.causal = causal;
  spec.norm = norm;
  spec.activation = activation;
  spec.dropout = dropout;
  return spec;
}

std::vector<OpCase> sequence_cases() {
  const auto sequence = [](std::string name, LayerSpec spec, double forward, double backward,
                           bool selective = false) {
    OpCase op{std::move(name), spec, 32, 3, GemmPrecision::Fp32, forward, backward};
    op.seq = 7;
    op.vocab = 50;
    op.selective_recompute = selective;
    return op;
  };
  LayerSpec embedding{LayerType::Embedding, 0, true, 0.0};
  OpCase lookup = sequence("embedding", embedding, 0, 1e-6);  // a copy: exact
  lookup.embedding_itself = true;
  // LLaMA's attention: rotary positions (no position table), `kv_heads`
  // key/value heads shared by the 4 query heads of width 8.
  const auto llama = [&](std::string name, LayerSpec spec, double forward, double backward,
                         int64_t kv_heads, bool embedding_itself = false, bool selective = false) {
    spec.kv_heads = kv_heads;
    OpCase op = sequence(std::move(name), spec, forward, backward, selective);
    op.rotary = true;
    op.embedding_itself = embedding_itself;
    return op;
  };
  const auto gelu = BlockActivation::Gelu;
  const auto swiglu = BlockActivation::SwiGlu;
  const auto layer_norm = NormType::LayerNorm;
  const auto rms = NormType::RmsNorm;
  // Fused attention (selective recompute) at GPT-2's head width, 64: 2 heads
  // of a 128-wide model over 70 positions, past one 64-query block and two
  // 32-row tiles.
  const auto wide_heads = [&](std::string name, bool causal, double dropout) {
    LayerSpec spec = block(causal, layer_norm, gelu, dropout);
    spec.heads = 2;
    spec.ffn = 128;
    OpCase op = sequence(std::move(name), spec, 1e-4, 1e-3, true);
    op.in = 128;
    op.seq = 70;
    op.fused_attention = true;
    return op;
  };
  OpCase fused_llama = llama("block_gqa_rope_dropout_fused", block(true, rms, swiglu, 0.2, false),
                             1e-4, 1e-3, 2, false, true);
  fused_llama.fused_attention = true;
  // Blocks chain GEMMs, reductions and softmaxes: sums reassociate.
  return {
      lookup,
      sequence("per_token_linear", LayerSpec{LayerType::Linear, 24, true, 0.0}, 1e-5, 1e-4),
      sequence("per_token_layernorm", LayerSpec{LayerType::LayerNorm, 0, true, 0.0}, 1e-5, 1e-4),
      sequence("block_gelu_layernorm_causal", block(true, layer_norm, gelu, 0.0), 1e-4, 1e-3),
      sequence("block_gelu_layernorm", block(false, layer_norm, gelu, 0.0), 1e-4, 1e-3),
      sequence("block_swiglu_rmsnorm_causal", block(true, rms, swiglu, 0.0, false), 1e-4, 1e-3),
      sequence("block_swiglu_rmsnorm", block(false, rms, swiglu, 0.0, false), 1e-4, 1e-3),
      sequence("block_dropout_causal", block(true, layer_norm, gelu, 0.2), 1e-4, 1e-3),
      sequence("block_swiglu_dropout", block(false, rms, swiglu, 0.2), 1e-4, 1e-3),
      sequence("block_selective_recompute", block(true, layer_norm, gelu, 0.2), 1e-4, 1e-3, true),
      llama("embedding_rope", embedding, 0, 1e-6, 0, true),
      llama("block_gqa_rope_causal", block(true, rms, swiglu, 0.0, false), 1e-4, 1e-3, 2),
      llama("block_mqa_rope", block(false, rms, swiglu, 0.0, false), 1e-4, 1e-3, 1),
      llama("block_gqa_rope_dropout_recompute", block(true, rms, swiglu, 0.2, false), 1e-4, 1e-3, 2,
            false, true),
      wide_heads("block_fused_attention_head_width_64_causal", true, 0.1),
      wide_heads("block_fused_attention_head_width_64", false, 0.0),
      fused_llama,
  };
}

// A moe layer of 4 experts whose auxiliary loss weighs enough to show in the gate's gradient.
LayerSpec moe(int64_t top_k, double capacity_factor) {
  LayerSpec spec = pipelab::testing::moe_spec(4, top_k, capacity_factor);
  spec.aux_loss_weight = 0.1;
  return spec;
}

// A transformer_block whose MLP is moe(top_k, capacity_factor) (Switch's
// block at top-1, GShard's at top-2), dropout inside it as given.
LayerSpec block_with_experts(int64_t top_k, double capacity_factor, double dropout) {
  LayerSpec spec = block(true, NormType::LayerNorm, BlockActivation::Gelu, dropout);
  const LayerSpec experts = moe(top_k, capacity_factor);
  spec.experts = experts.experts;
  spec.top_k = experts.top_k;
  spec.ffn = experts.ffn;
  spec.capacity_factor = experts.capacity_factor;
  spec.aux_loss_weight = experts.aux_loss_weight;
  return spec;
}

// Mixture-of-Experts: the gate and the experts are GEMMs; routing runs on the
// host by core's code, so the expert load must match exactly. Each row a
// token (after a relu), or each position of a GPT. A capacity factor of 0.5
// gives 0.5 x tokens x top_k slots in all: half the assignments are dropped.
std::vector<OpCase> moe_cases() {
  const auto flat = [](std::string name, LayerSpec spec, bool drops) {
    OpCase op{std::move(name), spec, 40, 37, GemmPrecision::Fp32, 1e-4, 1e-3};
    op.drops = drops;
    return op;
  };
  const auto gpt = [](std::string name, LayerSpec spec, bool drops) {
    OpCase op{std::move(name), spec, 32, 3, GemmPrecision::Fp32, 1e-4, 1e-3};
    op.seq = 7;
    op.vocab = 50;
    op.drops = drops;
    return op;
  };
  return {flat("moe_top1", moe(1, 4.0), false), flat("moe_top2", moe(2, 2.0), false),
          flat("moe_top1_drops", moe(1, 0.5), true), flat("moe_top2_drops", moe(2, 0.5), true),
          gpt("moe_gpt_top2", moe(2, 1.25), false),
          gpt("block_experts_top1", block_with_experts(1, 4.0, 0.0), false),
          gpt("block_experts_top2_drops", block_with_experts(2, 0.5, 0.0), true),
          gpt("block_experts_top1_dropout", block_with_experts(1, 4.0, 0.2), false)};
}

// A layer with a window (conv2d, pools) or a stride (residual_block).
LayerSpec windowed(LayerType type, int64_t out, int64_t kernel, int64_t stride, int64_t padding,
                   bool bias = true) {
  LayerSpec spec{type, out, bias, 0.0};
  spec.kernel = kernel;
  spec.stride = stride;
  spec.padding = padding;
  return spec;
}

std::vector<OpCase> image_cases() {
  const auto image = [](std::string name, LayerSpec spec, double forward, double backward) {
    OpCase op{std::move(name), spec, 0, 5, GemmPrecision::Fp32, forward, backward};
    op.image = {3, 7, 9};  // odd sizes: windows hang over the edges unevenly
    return op;
  };
  LayerSpec batch_norm{LayerType::BatchNorm, 0, true, 0.0};
  // Window addressing is the host's formula (kernels/image_math.h): pools are
  // exact; GEMMs and per-channel sums reassociate. Batch norm's running
  // statistics are compared too.
  return {
      image("conv2d", windowed(LayerType::Conv2d, 6, 3, 1, 1), 1e-5, 1e-4),
      image("conv2d_strided_no_bias", windowed(LayerType::Conv2d, 4, 3, 2, 0, false), 1e-5, 1e-4),
      image("conv2d_1x1", windowed(LayerType::Conv2d, 5, 1, 1, 0), 1e-5, 1e-4),
      image("maxpool", windowed(LayerType::MaxPool, 0, 2, 2, 0), 0, 0),
      image("maxpool_overlapping", windowed(LayerType::MaxPool, 0, 3, 2, 1), 0, 0),
      // The device may fuse the backward's multiply-add.
      image("avgpool", windowed(LayerType::AvgPool, 0, 3, 2, 1), 1e-6, 1e-6),
      image("global_avgpool", LayerSpec{LayerType::GlobalAvgPool, 0, true, 0.0}, 1e-6, 1e-6),
      image("flatten", LayerSpec{LayerType::Flatten, 0, true, 0.0}, 0, 0),
      image("batchnorm", batch_norm, 1e-5, 1e-4),
      image("residual_block", windowed(LayerType::ResidualBlock, 3, 3, 1, 1), 1e-4, 1e-3),
      image("residual_block_projection", windowed(LayerType::ResidualBlock, 8, 3, 2, 1), 1e-4, 1e-3),
  };
}

const std::vector<OpCase>& op_cases() {
  const auto layer = [](LayerType type, int64_t out = 0, bool bias = true, double p = 0.0) {
    return LayerSpec{type, out, bias, p};
  };
  static const std::vector<OpCase> cases = {
      // GEMMs: FP32 sums differ by reassociation; TF32 keeps 10 mantissa bits.
      {"linear", layer(LayerType::Linear, 129), 300, 37, GemmPrecision::Fp32, 1e-5, 1e-4},
      {"linear_no_bias", layer(LayerType::Linear, 64, false), 33, 5, GemmPrecision::Fp32, 1e-5,
       1e-4},
      {"linear_tf32", layer(LayerType::Linear, 129), 300, 37, GemmPrecision::Tf32, 1e-3, 1e-3},
      // Elementwise: the same formula per element (kernels/activation_math.h).
      {"relu", layer(LayerType::Relu), 129, 37, GemmPrecision::Fp32, 1e-6, 1e-6},
      {"gelu", layer(LayerType::Gelu), 129, 37, GemmPrecision::Fp32, 1e-5, 1e-5},
      {"tanh", layer(LayerType::Tanh), 129, 37, GemmPrecision::Fp32, 1e-5, 1e-5},
      {"sigmoid", layer(LayerType::Sigmoid), 129, 37, GemmPrecision::Fp32, 1e-5, 1e-5},
      // Row reductions: under a warp, uneven, several passes per thread.
      {"layernorm_5", layer(LayerType::LayerNorm), 5, 9, GemmPrecision::Fp32, 1e-5, 1e-4},
      {"layernorm_1000", layer(LayerType::LayerNorm), 1000, 9, GemmPrecision::Fp32, 1e-5, 1e-4},
      {"layernorm_3000", layer(LayerType::LayerNorm), 3000, 9, GemmPrecision::Fp32, 1e-5, 1e-4},
      // The counter-based mask is bit-identical: exact.
      {"dropout", layer(LayerType::Dropout, 0, true, 0.3), 301, 17, GemmPrecision::Fp32, 0, 0},
  };
  static const std::vector<OpCase> all = [] {
    std::vector<OpCase> list = cases;
    for (const OpCase& sequence_case : sequence_cases()) list.push_back(sequence_case);
    for (const OpCase& image_case : image_cases()) list.push_back(image_case);
    for (const OpCase& moe_case : moe_cases()) list.push_back(moe_case);
    return list;
  }();
  return all;
}

// A model whose layer 1 is the case's layer (layer 0 only gives the stack a
// predecessor, so the stack computes its input gradient).
ModelSpec one_layer_model(const OpCase& op) {
  ModelSpec model;
  if (op.seq > 0) {  // a GPT: embedding, then the case's layer (unless it is the embedding)
    LayerSpec embedding{LayerType::Embedding, 0, true, 0.0};
    embedding.vocab = op.vocab;
    embedding.dim = op.in;
    if (op.rotary) embedding.position = PositionEncoding::Rope;
    model.input = {op.seq};
    model.layers = {embedding};
    if (!op.embedding_itself) model.layers.push_back(op.layer);
    model.loss = LossType::CrossEntropy;
    return model;
  }
  model.input = op.image.empty() ? std::vector<int64_t>{op.in} : op.image;
  model.layers = {LayerSpec{LayerType::Relu, 0, true, 0.0}, op.layer};
  model.loss = LossType::Mse;
  return model;
}

std::vector<float> host_values(const std::vector<Parameter>& parameters, bool grads) {
  std::vector<float> values;
  for (const Parameter& parameter : parameters) {
    const Tensor& tensor = grads ? *parameter.grad : *parameter.value;
    values.insert(values.end(), tensor.data(), tensor.data() + tensor.size());
  }
  return values;
}

std::vector<float> device_values(const std::vector<GpuParameter>& parameters, bool grads) {
  std::vector<float> values;
  for (const GpuParameter& parameter : parameters) {
    const std::vector<float> part = (grads ? *parameter.grad : *parameter.value).to_vector();
    values.insert(values.end(), part.begin(), part.end());
  }
  return values;
}

class OpConformance : public ::testing::TestWithParam<OpCase> {
 protected:
  void SetUp() override { PIPELAB_REQUIRE_GPU(); }
};

TEST_P(OpConformance, MatchesTheCpu) {
  const OpCase& op = GetParam();
  const testing::FusedAttentionSwitch fused(op.fused_attention);
  const ModelSpec model = one_layer_model(op);
  const uint64_t seed = 11;
  const int first = op.embedding_itself ? 0 : 1;
  Sequential cpu(model, first, first + 1, seed, nullptr, {}, op.selective_recompute);
  DeviceContext context(0, op.precision);
  GpuSequential gpu(model, first, first + 1, seed, context, {}, op.selective_recompute);
  ASSERT_EQ(cpu.output_features(), gpu.output_features());
  // Initial weights are generated once, on the host, for both.
  EXPECT_EQ(device_values(gpu.parameters(), false), host_values(cpu.parameters(), false));

  // What each moe forward routed (other layers report nothing).
  struct Routed {
    std::vector<int64_t> routed, dropped;
    double aux_loss = 0;
  };
  std::vector<Routed> cpu_routed, gpu_routed;
  const auto recorder = [](std::vector<Routed>& into) {
    return [&into](int, const ForwardInfo&, const MoeRouting& routing, double aux_loss) {
      into.push_back({routing.routed, routing.dropped, aux_loss});
    };
  };
  cpu.connect_experts(recorder(cpu_routed), 0, {});
  gpu.connect_experts(recorder(gpu_routed), 0, {});

  const int64_t out = cpu.output_features();
  const int64_t in = cpu.input_features();
  Tensor x = random_tensor(op.batch, in, 1, 3.0);
  if (op.embedding_itself)  // token ids, stored as floats
    for (int64_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>((i * 7 + 3) % op.vocab);
  const Tensor dy = random_tensor(op.batch, out, 2);
  ForwardInfo info;
  info.step = 3;
  info.first_sample = 5;
  StageActivations cpu_saved;
  GpuStageActivations gpu_saved;
  const Tensor y_cpu = cpu.forward(x.clone(), info, cpu_saved);
  const DeviceTensor y_gpu = gpu.forward(
      DeviceTensor::from_host(x, &context.allocator(), MemoryCategory::Activations), info,
      gpu_saved);
  expect_close_to_scale(y_gpu.to_vector(), y_cpu.to_vector(), op.forward_tolerance,
                        op.name + " forward");

  const Tensor dx_cpu = cpu.backward_input(dy.clone(), cpu_saved);
  const DeviceTensor dx_gpu = gpu.backward_input(
      DeviceTensor::from_host(dy, &context.allocator(), MemoryCategory::Activations), gpu_saved);
  expect_close_to_scale(dx_gpu.to_vector(), dx_cpu.to_vector(), op.backward_tolerance,
                        op.name + " input gradient");

  cpu.backward_weight(cpu_saved);
  gpu.backward_weight(gpu_saved);
  // A second micro-batch: the weight gradients accumulate.
  StageActivations cpu_again;
  GpuStageActivations gpu_again;
  cpu.forward(x.clone(), info, cpu_again);
  gpu.forward(DeviceTensor::from_host(x, &context.allocator(), MemoryCategory::Activations), info,
              gpu_again);
  cpu.backward(dy.clone(), cpu_again);
  gpu.backward(DeviceTensor::from_host(dy, &context.allocator(), MemoryCategory::Activations),
               gpu_again);
  expect_close_to_scale(device_values(gpu.parameters(), true), host_values(cpu.parameters(), true),
                        op.backward_tolerance, op.name + " weight gradients");
  // What no gradient trains (batch norm's running statistics) moved alike.
  std::vector<float> cpu_buffers, gpu_buffers;
  for (Tensor* buffer : cpu.layer(0).buffers())
    cpu_buffers.insert(cpu_buffers.end(), buffer->data(), buffer->data() + buffer->size());
  for (DeviceTensor* buffer : gpu.layer(0).buffers()) {
    const std::vector<float> part = buffer->to_vector();
    gpu_buffers.insert(gpu_buffers.end(), part.begin(), part.end());
  }
  expect_close_to_scale(gpu_buffers, cpu_buffers, op.forward_tolerance, op.name + " buffers");

  // Routing ran on the host from each backend's gate: the same experts kept
  // and dropped, the same auxiliary loss up to the gate GEMM's rounding.
  ASSERT_EQ(gpu_routed.size(), cpu_routed.size()) << op.name;
  for (size_t i = 0; i < cpu_routed.size(); ++i) {
    EXPECT_EQ(gpu_routed[i].routed, cpu_routed[i].routed) << op.name << " forward " << i;
    EXPECT_EQ(gpu_routed[i].dropped, cpu_routed[i].dropped) << op.name << " forward " << i;
    EXPECT_NEAR(gpu_routed[i].aux_loss, cpu_routed[i].aux_loss, 1e-5 * cpu_routed[i].aux_loss)
        << op.name << " forward " << i;
  }
  if (has_experts(op.layer)) {
    ASSERT_FALSE(cpu_routed.empty()) << op.name << ": the experts reported no routing";
    int64_t dropped = 0;
    for (int64_t d : cpu_routed.front().dropped) dropped += d;
    if (op.drops)
      EXPECT_GT(dropped, 0) << op.name << ": the capacity was meant to drop assignments";
    else
      EXPECT_EQ(dropped, 0) << op.name << ": the capacity was meant to keep every assignment";
  }
}

INSTANTIATE_TEST_SUITE_P(EveryLayerOp, OpConformance, ::testing::ValuesIn(op_cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace pipelab::gpu
