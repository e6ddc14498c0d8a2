#include "gpu/kernels/block_dropout.h"

#include "gpu/kernels/attention_math.h"
#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

__global__ void attention_kernel(const float* in, float* out, int64_t batch, int64_t heads,
                                 int64_t seq, int64_t first_head, BlockDropoutKey key,
                                 attention_math::QueryRows queries) {
  const int64_t count = queries.count > 0 ? queries.count : seq;
  const int64_t per_head = count * seq;
  const int64_t per_sample = heads * per_head;
  const int64_t total = batch * per_sample;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t sample = i / per_sample;
    const int64_t head = (i - sample * per_sample) / per_head;
    const int64_t within = i - sample * per_sample - head * per_head;
    const int64_t query = attention_math::query_position(within / seq, seq, queries);
    const int64_t element =
        attention_math::dropout_element(first_head + head, query, within % seq, seq);
    const uint64_t site_key = block_site_key(key, sample, kAttentionSite);
    out[i] = block_keeps(site_key, element, key.p) ? in[i] * key.scale : 0.0f;
  }
}

__global__ void residual_kernel(const float* in, float* out, int64_t batch, int64_t seq,
                                int64_t dim, uint64_t site, BlockDropoutKey key,
                                int64_t first_position, const int64_t* positions) {
  const int64_t per_sample = seq * dim;
  const int64_t count = batch * per_sample;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t sample = i / per_sample;
    const uint64_t site_key = block_site_key(key, sample, site);
    const int64_t element =
        residual_dropout_element(first_position, dim, i - sample * per_sample, positions);
    out[i] = block_keeps(site_key, element, key.p) ? in[i] * key.scale : 0.0f;
  }
}

}  // namespace

void attention_dropout(const float* in, float* out, int64_t batch, int64_t heads, int64_t seq,
                       int64_t first_head, const BlockDropoutKey& key, cudaStream_t stream,
                       const attention_math::QueryRows& queries) {
  const int64_t count = batch * heads * (queries.count > 0 ? queries.count : seq) * seq;
  if (count == 0) return;
  attention_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(in, out, batch, heads, seq,
                                                                  first_head, key, queries);
  PIPELAB_CHECK_LAUNCH();
}

void residual_dropout(const float* in, float* out, int64_t batch, int64_t seq, int64_t dim,
                      uint64_t site, const BlockDropoutKey& key, cudaStream_t stream,
                      int64_t first_position, const int64_t* positions) {
  const int64_t count = batch * seq * dim;
  if (count == 0) return;
  residual_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(in, out, batch, seq, dim, site,
                                                                 key, first_position, positions);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
