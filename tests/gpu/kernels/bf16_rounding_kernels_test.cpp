// The device's bf16 rounding against the host's rule (bf16_math.h): the
// rounding kernel at every count and alignment (four at a time where it can,
// one at a time elsewhere), and the attention softmax kernels that round what
// they write for the next GEMM.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu/device/cuda_check.h"
#include "gpu/kernels/attention_softmax.h"
#include "gpu/kernels/bf16.h"
#include "gpu/kernels/bf16_math.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

using testing::random_values;

// Device memory for `count` values of T, freed at the end of the scope.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(int64_t count) {
    PIPELAB_CUDA_CHECK(cudaMalloc(&data_, static_cast<size_t>(count) * sizeof(T) + 16));
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* data() { return data_; }
  void upload(const std::vector<T>& values, int64_t offset = 0) {
    PIPELAB_CUDA_CHECK(cudaMemcpy(data_ + offset, values.data(), values.size() * sizeof(T),
                                  cudaMemcpyHostToDevice));
  }
  std::vector<T> download(int64_t count, int64_t offset = 0) const {
    std::vector<T> values(static_cast<size_t>(count));
    PIPELAB_CUDA_CHECK(cudaMemcpy(values.data(), data_ + offset, values.size() * sizeof(T),
                                  cudaMemcpyDeviceToHost));
    return values;
  }

 private:
  T* data_ = nullptr;
};

std::vector<uint16_t> host_rounding(const std::vector<float>& values) {
  std::vector<uint16_t> bits;
  for (float v : values) bits.push_back(bf16_math::to_bf16_bits(v));
  return bits;
}

TEST(Bf16RoundingKernelTest, RoundsAsTheHostAtEveryCountAndAlignment) {
  PIPELAB_REQUIRE_GPU();
  // Ties, NaNs and values past bf16's largest among ordinary ones.
  std::vector<float> values = random_values(4099, 3, 1e3);
  values[1] = 1.00390625f;  // halfway between two bf16s: ties to even
  values[2] = std::nanf("");
  values[3] = 3.4e38f;
  values[5] = -INFINITY;
  for (int64_t count : {0, 1, 3, 4, 8, 1023, 4096, 4099})
    for (int64_t offset : {0, 1, 2, 4}) {  // 16-byte aligned only at offset 0 and 4
      SCOPED_TRACE(::testing::Message() << count << " values at offset " << offset);
      const std::vector<float> part(values.begin(), values.begin() + count);
      DeviceArray<float> source(count + offset);
      DeviceArray<uint16_t> target(count + offset);
      source.upload(part, offset);
      kernels::to_bf16(source.data() + offset, target.data() + offset, count, nullptr);
      PIPELAB_CUDA_CHECK(cudaDeviceSynchronize());
      EXPECT_EQ(target.download(count, offset), host_rounding(part));
    }
}

TEST(Bf16RoundingKernelTest, SoftmaxKernelsRoundWhatTheyWrite) {
  PIPELAB_REQUIRE_GPU();
  const int64_t rows = 2 * 3 * 37, seq = 37;  // batch 2, 3 heads, causal
  const std::vector<float> scores = random_values(rows * seq, 5, 4.0);
  const std::vector<float> upstream = random_values(rows * seq, 6);
  DeviceArray<float> p(rows * seq), p_alone(rows * seq), gradient(rows * seq),
      gradient_alone(rows * seq);
  DeviceArray<uint16_t> p_bf16(rows * seq), ds_bf16(rows * seq);
  p.upload(scores);
  p_alone.upload(scores);
  kernels::scaled_masked_softmax(p.data(), p.data(), rows, seq, 0.25f, true, nullptr,
                                 p_bf16.data());
  kernels::scaled_masked_softmax(p_alone.data(), p_alone.data(), rows, seq, 0.25f, true, nullptr);
  gradient.upload(upstream);
  gradient_alone.upload(upstream);
  kernels::softmax_backward(p.data(), gradient.data(), rows, seq, nullptr, ds_bf16.data());
  kernels::softmax_backward(p.data(), gradient_alone.data(), rows, seq, nullptr);
  PIPELAB_CUDA_CHECK(cudaDeviceSynchronize());

  // The forward writes P as without rounding, and its rounding beside it.
  const std::vector<float> probabilities = p.download(rows * seq);
  EXPECT_EQ(probabilities, p_alone.download(rows * seq));
  EXPECT_EQ(p_bf16.download(rows * seq), host_rounding(probabilities));
  // The backward writes dS rounded instead, and leaves dP where it was.
  EXPECT_EQ(ds_bf16.download(rows * seq), host_rounding(gradient_alone.download(rows * seq)));
  EXPECT_EQ(gradient.download(rows * seq), upstream);
}

}  // namespace
}  // namespace pipelab::gpu
