// The matrix products a layer runs, by shape, so that the cost model can price
// each as the device runs it (core/sim/gemm_time.h): a GEMM whose inner
// dimension is a head's width, or whose output has few tiles, runs well below
// the rate of a large square one.
#pragma once

#include <cstdint>
#include <vector>

namespace pipelab {

// C[m, n] = A[m, k] B[k, n], `batch` independent times (attention's heads).
struct GemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;

  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
           static_cast<double>(batch);
  }
  auto operator<=>(const GemmShape&) const = default;
};

// Which dimension grows with the samples of a micro-batch: a linear's rows
// (the samples' tokens stacked), the inner dimension of its weight gradient
// (summed over those tokens), or attention's batch (heads of every sample).
enum class SampleAxis { Rows, Inner, Batch };

// One GEMM of one sample.
struct SampleGemm {
  GemmShape shape;
  SampleAxis grows = SampleAxis::Rows;

  // The GEMM a micro-batch of `samples` runs.
  GemmShape for_samples(int64_t samples) const;
};

// A layer's GEMMs per sample, by the part of the work that runs them.
struct SampleGemms {
  std::vector<SampleGemm> forward, backward_input, backward_weight;

  // A linear's three: y[tokens, out] = x[tokens, in] W[in, out], the input
  // gradient dx = dy W^T and the weight gradient dW = x^T dy.
  void add_linear(int64_t tokens, int64_t in, int64_t out);
};

// A pass's GEMMs: each shape once, with how many times the pass runs it.
struct GemmCount {
  GemmShape shape;
  int64_t count = 0;
  bool operator==(const GemmCount&) const = default;
};

// Adds `count` GEMMs of `shape` to `gemms`, merging with an equal shape.
void add_gemm(std::vector<GemmCount>& gemms, const GemmShape& shape, int64_t count);
// Adds a micro-batch of `samples` of each of `gemms`.
void add_gemms(std::vector<GemmCount>& gemms, const std::vector<SampleGemm>& per_sample,
               int64_t samples);
// The FLOPs of all of them.
double gemm_flops(const std::vector<GemmCount>& gemms);

}  // namespace pipelab
