#include "core/model/gemm_shape.h"

namespace pipelab {

GemmShape SampleGemm::for_samples(int64_t samples) const {
  GemmShape result = shape;
  switch (grows) {
    case SampleAxis::Rows:
      result.m *= samples;
      break;
    case SampleAxis::Inner:
      result.k *= samples;
      break;
    case SampleAxis::Batch:
      result.batch *= samples;
      break;
  }
  return result;
}

void SampleGemms::add_linear(int64_t tokens, int64_t in, int64_t out) {
  forward.push_back({{tokens, out, in}, SampleAxis::Rows});
  backward_input.push_back({{tokens, in, out}, SampleAxis::Rows});
  backward_weight.push_back({{in, out, tokens}, SampleAxis::Inner});
}

void add_gemm(std::vector<GemmCount>& gemms, const GemmShape& shape, int64_t count) {
  if (count <= 0 || shape.flops() <= 0) return;
  for (GemmCount& gemm : gemms)
    if (gemm.shape == shape) {
      gemm.count += count;
      return;
    }
  gemms.push_back({shape, count});
}

void add_gemms(std::vector<GemmCount>& gemms, const std::vector<SampleGemm>& per_sample,
               int64_t samples) {
  for (const SampleGemm& gemm : per_sample) add_gemm(gemms, gemm.for_samples(samples), 1);
}

double gemm_flops(const std::vector<GemmCount>& gemms) {
  double flops = 0;
  for (const GemmCount& gemm : gemms) flops += gemm.shape.flops() * static_cast<double>(gemm.count);
  return flops;
}

}  // namespace pipelab
