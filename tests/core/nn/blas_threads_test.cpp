#include "core/nn/blas_threads.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/nn/init.h"
#include "core/nn/linear.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::bitwise_equal;
using testing::random_tensor;

TEST(BlasThreads, SingleThreadedGemmsRunConcurrentlyAndDeterministically) {
  set_blas_threads(1);
  EXPECT_EQ(blas_threads(), 1);
  EXPECT_THROW(set_blas_threads(0), std::invalid_argument);

  // Each virtual device's thread multiplies at the same time as the others; the
  // results must equal the same products computed alone.
  constexpr int kThreads = 4;
  std::vector<std::unique_ptr<LinearLayer>> layers;
  std::vector<Tensor> inputs, expected(kThreads), actual(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    layers.push_back(std::make_unique<LinearLayer>(t, 96, 80, true, nullptr));
    init_linear(*layers.back(), 5);
    inputs.push_back(random_tensor(64, 96, 100 + t));
    expected[t] = layers[t]->forward(inputs[t], {});
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 20; ++repeat) actual[t] = layers[t]->forward(inputs[t], {});
    });
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_TRUE(bitwise_equal(actual[t], expected[t])) << "thread " << t;
}

}  // namespace
}  // namespace pipelab
