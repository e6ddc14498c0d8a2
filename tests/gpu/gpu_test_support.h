// Shared helpers of the GPU tests: skipping without a device, random inputs,
// and comparisons with per-op tolerances.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/nn/counter_rng.h"
#include "core/nn/tensor.h"
#include "gpu/executor/backend_registration.h"
#include "gpu/layers/attention.h"
#include "tests/support/runtime_test_support.h"

namespace pipelab::gpu::testing {

// The runtime tests' helpers (tests/support/runtime_test_support.h).
using pipelab::testing::drain_into;
using pipelab::testing::expect_same_curve;
using pipelab::testing::on_backend;
using pipelab::testing::run_experiment;
using pipelab::testing::RunOutput;
using pipelab::testing::stage_parameter_bytes;
using pipelab::testing::wait_for_pause;
using pipelab::testing::with_plan;

// The runtime tests' small experiment on `backend` (registering "cuda").
inline Experiment small_experiment(const std::string& backend = "cuda") {
  register_cuda_backend();
  return on_backend(pipelab::testing::small_experiment(), backend);
}

// Sets which fused attention kernels may run (gpu/layers/attention.h) for its
// lifetime: on, every kernel (FusedAttention::All); off, none.
class FusedAttentionSwitch {
 public:
  explicit FusedAttentionSwitch(bool on)
      : FusedAttentionSwitch(on ? FusedAttention::All : FusedAttention::Off) {}
  explicit FusedAttentionSwitch(FusedAttention mode) : before_(fused_attention_mode()) {
    set_fused_attention_mode(mode);
  }
  ~FusedAttentionSwitch() { set_fused_attention_mode(before_); }
  FusedAttentionSwitch(const FusedAttentionSwitch&) = delete;
  FusedAttentionSwitch& operator=(const FusedAttentionSwitch&) = delete;

 private:
  FusedAttention before_;
};

// How many CUDA devices there are, and why there are none.
struct GpuAvailability {
  int count = 0;
  std::string reason;  // "no CUDA device: <cuda error text>" when count == 0
};

inline GpuAvailability gpu_availability() {
  GpuAvailability result;
  // A failure here is the answer (no driver, no device), not an error.
  const cudaError_t status = cudaGetDeviceCount(&result.count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear it, so later CUDA calls start clean
    result.count = 0;
    result.reason = std::string("no CUDA device: ") + cudaGetErrorString(status);
  } else if (result.count == 0) {
    result.reason = "no CUDA device: the driver reports none";
  }
  return result;
}

// Deterministic values in [-scale, scale): element i of stream `seed`.
inline std::vector<float> random_values(int64_t count, uint64_t seed, double scale = 1.0) {
  std::vector<float> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    values[static_cast<size_t>(i)] =
        symmetric_uniform(combine_key(mix64(seed), static_cast<uint64_t>(i)), scale);
  return values;
}

inline Tensor random_tensor(int64_t rows, int64_t cols, uint64_t seed, double scale = 1.0) {
  return Tensor::from_values(rows, cols, random_values(rows * cols, seed, scale));
}

inline float max_abs(const std::vector<float>& values) {
  float result = 0.0f;
  for (float v : values) result = std::max(result, std::fabs(v));
  return result;
}

// Expects |actual - expected| <= rtol * |expected| + atol element by element,
// reporting the first few misses.
inline void expect_close(const std::vector<float>& actual, const std::vector<float>& expected,
                         double rtol, double atol, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int misses = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double tolerance = rtol * std::fabs(expected[i]) + atol;
    if (!(std::fabs(static_cast<double>(actual[i]) - expected[i]) <= tolerance)) {
      if (++misses <= 5)
        ADD_FAILURE() << what << ": element " << i << " is " << actual[i] << ", expected "
                      << expected[i] << " (tolerance " << tolerance << ")";
    }
  }
  EXPECT_EQ(misses, 0) << what << ": " << misses << " of " << actual.size()
                       << " elements out of tolerance";
}

// For results of sums (GEMMs, reductions): the tolerance scales with the
// largest magnitude in the expected tensor, since a sum with cancellation has
// an error relative to its terms, not to itself.
inline void expect_close_to_scale(const std::vector<float>& actual,
                                  const std::vector<float>& expected, double rtol,
                                  const std::string& what) {
  expect_close(actual, expected, rtol, rtol * std::max(1e-30f, max_abs(expected)), what);
}

// Runs body(k) for k < count, each on a thread of its own (the shards or
// members of a multi-device test), and joins them. An exception leaving a
// thread would end the whole test program (std::terminate) and with it every
// test after this one; here it fails this test instead, naming the thread.
// on_end(k, threw) runs on thread k as its body ends, however it ends (an
// exception, or a failed ASSERT returning early): it must release the threads
// that would otherwise wait for k in a collective forever (a lockstep
// collective's leave(), a run's stop), so that the test fails, not hangs.
inline void run_on_threads(int count, const std::function<void(int)>& body,
                           const std::function<void(int, bool)>& on_end) {
  std::vector<std::string> errors(static_cast<size_t>(count));
  std::vector<std::thread> threads;
  for (int k = 0; k < count; ++k)
    threads.emplace_back([&, k] {
      bool threw = true;
      try {
        body(k);
        threw = false;
      } catch (const std::exception& error) {
        errors[static_cast<size_t>(k)] = error.what();
      } catch (...) {
        errors[static_cast<size_t>(k)] = "an exception of unknown type";
      }
      on_end(k, threw);
    });
  for (std::thread& thread : threads) thread.join();
  for (int k = 0; k < count; ++k)
    if (!errors[static_cast<size_t>(k)].empty())
      ADD_FAILURE() << "thread " << k << " threw: " << errors[static_cast<size_t>(k)];
}

}  // namespace pipelab::gpu::testing

// Skips the test, with the reason, unless at least `n` CUDA devices exist.
#define PIPELAB_REQUIRE_GPUS(n)                                                          \
  do {                                                                                   \
    const ::pipelab::gpu::testing::GpuAvailability pipelab_gpus_ =                       \
        ::pipelab::gpu::testing::gpu_availability();                                     \
    if (pipelab_gpus_.count == 0) GTEST_SKIP() << pipelab_gpus_.reason;                  \
    if (pipelab_gpus_.count < (n))                                                       \
      GTEST_SKIP() << "needs " << (n) << " CUDA devices, found " << pipelab_gpus_.count; \
  } while (0)

#define PIPELAB_REQUIRE_GPU() PIPELAB_REQUIRE_GPUS(1)
