// Host-only checks (no GPU needed): the formulas the kernels share with the
// host (device_rng.h, activation_math.h, optimizer_math.h) against core/nn.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/nn/activations.h"
#include "core/nn/counter_rng.h"
#include "core/nn/dropout.h"
#include "core/nn/optimizer.h"
#include "gpu/kernels/device_rng.h"
#include "gpu/layers/optimizer.h"
#include "gpu/kernels/activation_math.h"
#include "gpu/kernels/optimizer_math.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

TEST(DeviceRngTest, HashPortEqualsCoreForManyInputs) {
  for (uint64_t i = 0; i < 20000; ++i) {
    // Spread the inputs over the whole 64-bit range, small values included.
    const uint64_t a = i < 1000 ? i : mix64(i * 7919);
    const uint64_t b = mix64(a ^ 0x5555);
    ASSERT_EQ(device_mix64(a), mix64(a)) << a;
    ASSERT_EQ(device_combine_key(a, b), combine_key(a, b)) << a << " " << b;
    ASSERT_EQ(device_unit_float(b), unit_float(b)) << b;
  }
  for (uint64_t seed : {0ull, 1ull, 42ull, 0xFFFFFFFFFFFFFFFFull})
    for (int layer = 0; layer < 50; ++layer)
      for (RandomStream stream :
           {RandomStream::LinearWeight, RandomStream::LinearBias, RandomStream::Dropout})
        ASSERT_EQ(device_layer_key(seed, static_cast<uint64_t>(stream), layer),
                  layer_key(seed, stream, layer));
}

TEST(DeviceRngTest, DropoutMaskPortEqualsCoreDropoutKeeps) {
  int64_t kept = 0, checked = 0;
  for (uint64_t seed : {1ull, 99ull})
    for (int layer : {0, 3, 17})
      for (int step : {0, 1, 250})
        for (float p : {0.1f, 0.5f, 0.9f}) {
          const uint64_t key =
              device_layer_key(seed, static_cast<uint64_t>(RandomStream::Dropout), layer);
          for (int64_t sample = 0; sample < 12; ++sample) {
            const uint64_t row = dropout_row_key(key, step, sample * 1001);
            for (int64_t feature = 0; feature < 40; ++feature) {
              const bool port = dropout_row_keeps(row, feature * 3, p);
              ASSERT_EQ(port, dropout_keeps(seed, layer, step, sample * 1001, feature * 3, p));
              kept += port;
              ++checked;
            }
          }
        }
  // The masks are not degenerate: about half are kept over these p.
  EXPECT_GT(kept, checked / 4);
  EXPECT_LT(kept, checked * 3 / 4);
}

// The per-element formulas equal the CPU layers' outputs bit for bit on the host.
TEST(ActivationMathTest, EqualsCpuLayersOnTheHost) {
  const Tensor x = testing::random_tensor(4, 64, 7, 4.0);
  const Tensor dy = testing::random_tensor(4, 64, 8);
  const struct {
    LayerType type;
    Activation kind;
  } cases[] = {{LayerType::Relu, Activation::Relu},
               {LayerType::Gelu, Activation::Gelu},
               {LayerType::Tanh, Activation::Tanh},
               {LayerType::Sigmoid, Activation::Sigmoid}};
  for (const auto& c : cases) {
    const std::unique_ptr<Layer> layer = make_activation_layer(c.type, 0, 64, nullptr);
    const Tensor y = layer->forward(x, ForwardInfo{});
    const Tensor dx = layer->backward_input(x, dy, ForwardInfo{});
    for (int64_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(activation_math::value(c.kind, x.data()[i]), y.data()[i])
          << layer_type_name(c.type) << " at " << i;
      ASSERT_EQ(dy.data()[i] * activation_math::derivative(c.kind, x.data()[i]), dx.data()[i])
          << layer_type_name(c.type) << " at " << i;
    }
  }
}

// Runs updates of the CPU optimizer and of the shared formulas with the GPU
// optimizer's scalars (as its kernels apply them) from the same start; they
// must agree bit for bit.
void expect_optimizer_formulas_match(const OptimizerSettings& settings) {
  const int64_t n = 257;
  Tensor value = testing::random_tensor(1, n, 11);
  Tensor grad(1, n);
  std::vector<float> p = value.to_vector();
  std::vector<float> state_a(n, 0.0f), state_b(n, 0.0f);
  const std::unique_ptr<Optimizer> cpu = make_optimizer(settings, {{&value, &grad}});
  for (int step = 1; step <= 4; ++step) {
    const std::vector<float> g = testing::random_values(n, 100 + step);
    std::copy(g.begin(), g.end(), grad.data());
    cpu->step();
    const optimizer_math::AdamScalars s = adam_scalars(settings, step);
    for (int64_t k = 0; k < n; ++k) {
      const float lr = static_cast<float>(settings.lr);
      const float wd = static_cast<float>(settings.weight_decay);
      if (settings.type != OptimizerType::Sgd)
        optimizer_math::adam_update(p[k], state_a[k], state_b[k], g[k], s);
      else if (settings.momentum > 0)
        optimizer_math::sgd_momentum_update(p[k], state_a[k], g[k], lr,
                                            static_cast<float>(settings.momentum), wd);
      else
        optimizer_math::sgd_update(p[k], g[k], lr, wd);
    }
    for (int64_t k = 0; k < n; ++k)
      ASSERT_EQ(p[k], value.data()[k])
          << optimizer_type_name(settings.type) << " step " << step << " element " << k;
  }
}

TEST(OptimizerMathTest, SgdEqualsCpu) {
  OptimizerSettings settings;
  settings.lr = 0.1;
  settings.weight_decay = 0.01;
  expect_optimizer_formulas_match(settings);
}

TEST(OptimizerMathTest, SgdMomentumEqualsCpu) {
  OptimizerSettings settings;
  settings.lr = 0.05;
  settings.momentum = 0.9;
  settings.weight_decay = 0.001;
  expect_optimizer_formulas_match(settings);
}

TEST(OptimizerMathTest, AdamEqualsCpu) {
  OptimizerSettings settings;
  settings.type = OptimizerType::Adam;
  settings.lr = 0.01;
  settings.weight_decay = 0.02;
  expect_optimizer_formulas_match(settings);
}

TEST(OptimizerMathTest, AdamWEqualsCpu) {
  OptimizerSettings settings;
  settings.type = OptimizerType::AdamW;
  settings.lr = 0.01;
  settings.weight_decay = 0.1;
  expect_optimizer_formulas_match(settings);
}

}  // namespace
}  // namespace pipelab::gpu
