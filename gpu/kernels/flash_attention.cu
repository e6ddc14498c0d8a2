#include <stdexcept>

#include "gpu/kernels/flash_attention.h"
#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

using flash_math::FlashInput;
using flash_math::FlashLayout;

constexpr int kQueryRows = 64;  // query rows per block of the forward and dQ kernels
constexpr int kKeyRows = 32;    // key rows per block of the dK/dV kernel
constexpr int kTile = 32;       // rows staged in shared memory at a time

__host__ __device__ inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

// Rows [first, first + count) of one head's operand at `column` into tile[r][c].
template <int D, int Stride>
__device__ void stage_rows(float (*tile)[Stride], FlashInput source, const FlashLayout& at,
                           int64_t b, int64_t first, int count, int64_t column) {
  for (int e = threadIdx.x; e < count * D; e += blockDim.x) {
    const int r = e / D, c = e % D;
    tile[r][c] = source[at.qkv_at(b, first + r, column + c)];
  }
}

// The same from the output-gradient rows [batch * seq, width].
template <int D>
__device__ void stage_gradient_rows(float (*tile)[D], const float* dout, const FlashLayout& at,
                                    int64_t b, int64_t h, int64_t first, int count) {
  for (int e = threadIdx.x; e < count * D; e += blockDim.x) {
    const int r = e / D, c = e % D;
    tile[r][c] = dout[at.out_at(b, first + r, h) + c];
  }
}

template <int D>
__global__ void forward_kernel(FlashInput qkv, FlashLayout at, BlockDropoutKey dropout, float* out,
                               float* lse) {
  const int64_t b = blockIdx.x / at.heads, h = blockIdx.x % at.heads;
  const int64_t first = static_cast<int64_t>(blockIdx.y) * kQueryRows;
  const int64_t i = first + threadIdx.x;
  const bool live = i < at.seq;
  __shared__ float keys[kTile][D];
  __shared__ float values[kTile][D];
  float q[D];
  if (live) {
#pragma unroll
    for (int c = 0; c < D; ++c) q[c] = qkv[at.qkv_at(b, i, at.q_column(h) + c)];
  }
  flash_math::ForwardRow<D> row;
  const int64_t key_end = at.visible_keys(smaller(first + kQueryRows, at.seq) - 1);
  const int64_t k_column = at.k_column_of_group(h / at.group);
  const int64_t visible = live ? at.visible_keys(i) : 0;
  for (int64_t t0 = 0; t0 < key_end; t0 += kTile) {
    const int count = static_cast<int>(smaller(kTile, key_end - t0));
    stage_rows<D, D>(keys, qkv, at, b, t0, count, k_column);
    stage_rows<D, D>(values, qkv, at, b, t0, count, k_column + D);
    __syncthreads();
    for (int r = 0; r < count && t0 + r < visible; ++r)
      flash_math::fold_key<D>(row, q, keys[r], values[r], at.scale,
                              flash_math::dropout_weight(dropout, at, b, h, i, t0 + r));
    __syncthreads();
  }
  if (!live) return;
  const float row_lse = flash_math::finish_row<D>(row);
  float* o = out + at.out_at(b, i, h);
#pragma unroll
  for (int c = 0; c < D; ++c) o[c] = row.out[c];
  lse[at.row_at(b, h, i)] = row_lse;
}

// dQ, and D_i on the way (pass 0 sums D_i, pass 1 dq with it).
template <int D>
__global__ void query_gradient_kernel(FlashInput qkv, const float* dout, const float* lse,
                                      FlashLayout at, BlockDropoutKey dropout, float* row_dots,
                                      float* dqkv) {
  const int64_t b = blockIdx.x / at.heads, h = blockIdx.x % at.heads;
  const int64_t first = static_cast<int64_t>(blockIdx.y) * kQueryRows;
  const int64_t i = first + threadIdx.x;
  const bool live = i < at.seq;
  __shared__ float keys[kTile][D];
  __shared__ float values[kTile][D];
  float q[D], d_out[D], dq[D];
  float row_lse = 0.0f;
  if (live) {
#pragma unroll
    for (int c = 0; c < D; ++c) {
      q[c] = qkv[at.qkv_at(b, i, at.q_column(h) + c)];
      d_out[c] = dout[at.out_at(b, i, h) + c];
      dq[c] = 0.0f;
    }
    row_lse = lse[at.row_at(b, h, i)];
  }
  const int64_t key_end = at.visible_keys(smaller(first + kQueryRows, at.seq) - 1);
  const int64_t k_column = at.k_column_of_group(h / at.group);
  const int64_t visible = live ? at.visible_keys(i) : 0;
  float row_dot = 0.0f;
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t t0 = 0; t0 < key_end; t0 += kTile) {
      const int count = static_cast<int>(smaller(kTile, key_end - t0));
      stage_rows<D, D>(keys, qkv, at, b, t0, count, k_column);
      stage_rows<D, D>(values, qkv, at, b, t0, count, k_column + D);
      __syncthreads();
      for (int r = 0; r < count && t0 + r < visible; ++r) {
        const float p = flash_math::probability<D>(q, keys[r], at.scale, row_lse);
        const float w = flash_math::dropout_weight(dropout, at, b, h, i, t0 + r);
        if (pass == 0)
          row_dot += flash_math::row_dot_term<D>(p, w, d_out, values[r]);
        else
          flash_math::add_scaled<D>(
              dq, flash_math::score_gradient<D>(p, w, d_out, values[r], row_dot), keys[r]);
      }
      __syncthreads();
    }
  if (!live) return;
  float* target = dqkv + at.qkv_at(b, i, at.q_column(h));
#pragma unroll
  for (int c = 0; c < D; ++c) target[c] = dq[c] * at.scale;
  row_dots[at.row_at(b, h, i)] = row_dot;
}

// dK and dV of key/value head g: each thread one key row, over every query
// of the group's heads that sees it.
template <int D>
__global__ void key_value_gradient_kernel(FlashInput qkv, const float* dout, const float* lse,
                                          const float* row_dots, FlashLayout at,
                                          BlockDropoutKey dropout, float* dqkv) {
  const int64_t kv_heads = at.kv_heads();
  const int64_t b = blockIdx.x / kv_heads, g = blockIdx.x % kv_heads;
  const int64_t first_key = static_cast<int64_t>(blockIdx.y) * kKeyRows;
  const int64_t j = first_key + threadIdx.x;
  const bool live = j < at.seq;
  const int own_count = static_cast<int>(smaller(kKeyRows, at.seq - first_key));
  const int64_t k_column = at.k_column_of_group(g);
  // Own rows padded by one so each thread's row starts in its own bank.
  __shared__ float own_keys[kKeyRows][D + 1];
  __shared__ float own_values[kKeyRows][D + 1];
  __shared__ float queries[kTile][D];
  __shared__ float gradients[kTile][D];
  __shared__ float tile_lse[kTile];
  __shared__ float tile_dots[kTile];
  stage_rows<D, D + 1>(own_keys, qkv, at, b, first_key, own_count, k_column);
  stage_rows<D, D + 1>(own_values, qkv, at, b, first_key, own_count, k_column + D);
  float dk[D], dv[D];
#pragma unroll
  for (int c = 0; c < D; ++c) dk[c] = dv[c] = 0.0f;
  const int64_t query_start = at.first_query_seeing(first_key);
  const int64_t own_first_query = live ? at.first_query_seeing(j) : at.seq;
  for (int64_t r = 0; r < at.group; ++r) {
    const int64_t h = g * at.group + r;
    for (int64_t t0 = query_start; t0 < at.seq; t0 += kTile) {
      const int count = static_cast<int>(smaller(kTile, at.seq - t0));
      __syncthreads();  // the previous tile (and the own rows) are read or written
      stage_rows<D, D>(queries, qkv, at, b, t0, count, at.q_column(h));
      stage_gradient_rows<D>(gradients, dout, at, b, h, t0, count);
      for (int e = threadIdx.x; e < count; e += blockDim.x) {
        tile_lse[e] = lse[at.row_at(b, h, t0 + e)];
        tile_dots[e] = row_dots[at.row_at(b, h, t0 + e)];
      }
      __syncthreads();
      if (!live) continue;
      for (int e = 0; e < count; ++e) {
        const int64_t i = t0 + e;
        if (i < own_first_query) continue;
        const float p =
            flash_math::probability<D>(queries[e], own_keys[threadIdx.x], at.scale, tile_lse[e]);
        const float w = flash_math::dropout_weight(dropout, at, b, h, i, j);
        flash_math::add_scaled<D>(dv, p * w, gradients[e]);
        flash_math::add_scaled<D>(dk,
                                  flash_math::score_gradient<D>(
                                      p, w, gradients[e], own_values[threadIdx.x], tile_dots[e]),
                                  queries[e]);
      }
    }
  }
  if (!live) return;
  float* target = dqkv + at.qkv_at(b, j, k_column);
#pragma unroll
  for (int c = 0; c < D; ++c) {
    target[c] = dk[c] * at.scale;
    target[D + c] = dv[c];
  }
}

unsigned query_tiles(const FlashLayout& at, int rows) {
  return static_cast<unsigned>((at.seq + rows - 1) / rows);
}

template <int D>
void forward_for(FlashInput qkv, const FlashLayout& at, const BlockDropoutKey& dropout, float* out,
                 float* lse, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(at.batch * at.heads), query_tiles(at, kQueryRows));
  forward_kernel<D><<<grid, kQueryRows, 0, stream>>>(qkv, at, dropout, out, lse);
  PIPELAB_CHECK_LAUNCH();
}

template <int D>
void backward_for(FlashInput qkv, const float* dout, const float* lse, const FlashLayout& at,
                  const BlockDropoutKey& dropout, float* row_dots, float* dqkv,
                  cudaStream_t stream) {
  const dim3 query_grid(static_cast<unsigned>(at.batch * at.heads), query_tiles(at, kQueryRows));
  query_gradient_kernel<D>
      <<<query_grid, kQueryRows, 0, stream>>>(qkv, dout, lse, at, dropout, row_dots, dqkv);
  PIPELAB_CHECK_LAUNCH();
  const dim3 key_grid(static_cast<unsigned>(at.batch * at.kv_heads()), query_tiles(at, kKeyRows));
  key_value_gradient_kernel<D>
      <<<key_grid, kKeyRows, 0, stream>>>(qkv, dout, lse, row_dots, at, dropout, dqkv);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace

bool flash_attention_supports(int64_t head_dim, bool bf16_inputs) {
  if (bf16_inputs && flash_attention_mma_supports(head_dim)) return true;
  return head_dim == 8 || head_dim == 16 || head_dim == 32 || head_dim == 64;
}

void flash_attention_forward(FlashInput qkv, const FlashLayout& layout,
                             const BlockDropoutKey& dropout, float* out, float* lse,
                             cudaStream_t stream) {
  if (layout.batch * layout.heads * layout.seq == 0) return;
  if (qkv.bf16 && flash_attention_mma_supports(layout.head_dim))
    return flash_attention_mma_forward(qkv.bf16, layout, dropout, out, lse, stream);
  switch (layout.head_dim) {
    case 8:
      return forward_for<8>(qkv, layout, dropout, out, lse, stream);
    case 16:
      return forward_for<16>(qkv, layout, dropout, out, lse, stream);
    case 32:
      return forward_for<32>(qkv, layout, dropout, out, lse, stream);
    case 64:
      return forward_for<64>(qkv, layout, dropout, out, lse, stream);
    default:
      throw std::invalid_argument("fused attention does not take heads of this width");
  }
}

void flash_attention_backward(FlashInput qkv, FlashInput out, const float* dout, const float* lse,
                              const FlashLayout& layout, const BlockDropoutKey& dropout,
                              float* row_dots, float* dqkv, cudaStream_t stream) {
  if (layout.batch * layout.heads * layout.seq == 0) return;
  if (qkv.bf16 && flash_attention_mma_supports(layout.head_dim))
    return flash_attention_mma_backward(qkv.bf16, out, dout, lse, layout, dropout, row_dots, dqkv,
                                        stream);
  // The float32 kernels sum D_i themselves (a first pass over the keys): `out` is not read.
  switch (layout.head_dim) {
    case 8:
      return backward_for<8>(qkv, dout, lse, layout, dropout, row_dots, dqkv, stream);
    case 16:
      return backward_for<16>(qkv, dout, lse, layout, dropout, row_dots, dqkv, stream);
    case 32:
      return backward_for<32>(qkv, dout, lse, layout, dropout, row_dots, dqkv, stream);
    case 64:
      return backward_for<64>(qkv, dout, lse, layout, dropout, row_dots, dqkv, stream);
    default:
      throw std::invalid_argument("fused attention does not take heads of this width");
  }
}

}  // namespace pipelab::gpu::kernels
