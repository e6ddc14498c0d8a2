// Fused attention on tensor cores, for bf16 q, k and v (bf16-mixed): the
// same algorithm and formulas as flash_attention.cu's float kernels
// (flash_attention_math.h), with the four products of each 64 x 64 tile
// (S = Q K^T, O += P V in the forward; S, dP = dO V^T, dV += P^T dO,
// dK += dS^T Q and dQ += dS K in the backward) as 16 x 16 x 16 bf16 WMMA
// products accumulating in float32. The rest stays float32: the scores, the
// online softmax, lse and D_i; P, dS and dO are rounded to bf16 as the
// products' inputs, as the unfused bf16 path rounds them.
//
// Each block holds 64 rows (4 warps, 16 rows each) and stages the other
// operand 64 rows at a time in shared memory; a warp's rows of S, P and the
// float accumulators live in shared memory too, so the row-wise softmax can
// read them. The forward and dQ kernels take 64 queries each, the dK/dV
// kernel 64 keys, over every query of the group's heads that sees them:
// every output element is written by one block (no atomics), so results are
// the same from run to run.
#include <cuda_bf16.h>
#include <mma.h>

#include <stdexcept>

#include "gpu/kernels/flash_attention.h"
#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

using flash_math::FlashLayout;
namespace wmma = nvcuda::wmma;

constexpr int kRows = 64;  // a block's own rows, and the rows staged per tile
constexpr int kWarps = 4;  // 16 rows each
constexpr int kThreads = 32 * kWarps;
constexpr int kPiece = 16;  // the WMMA tile

// Leading dimensions in shared memory, each row padded past a multiple of
// 128 bytes so that the 8 rows one matrix load reads start in different banks
// (unpadded, every row began in the same bank: 8-way conflicts).
template <int D>
constexpr int kTileLd = D + 8;            // bf16 [kRows][D]: Q, K, V, dO
constexpr int kSquareLd = kRows + 4;      // float [kRows][kRows]: S, dP
constexpr int kSquareBf16Ld = kRows + 8;  // bf16 [kRows][kRows]: P, dS
template <int D>
constexpr int kRowsLd = D + 4;  // float [kRows][D]: O, and dK, dV, dQ on their way out

using Bf16 = __nv_bfloat16;
using ARow = wmma::fragment<wmma::matrix_a, kPiece, kPiece, kPiece, Bf16, wmma::row_major>;
using BRow = wmma::fragment<wmma::matrix_b, kPiece, kPiece, kPiece, Bf16, wmma::row_major>;
using BCol = wmma::fragment<wmma::matrix_b, kPiece, kPiece, kPiece, Bf16, wmma::col_major>;
using Accumulator = wmma::fragment<wmma::accumulator, kPiece, kPiece, kPiece, float>;

__device__ inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

// The warp's maximum and sum of one value per lane, in every lane.
__device__ inline float warp_max(float value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}
__device__ inline float warp_sum(float value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

__device__ inline Bf16 to_bf16(float value) {
  return __ushort_as_bfloat16(bf16_math::to_bf16_bits(value));
}

// Carves a block's dynamic shared memory into consecutive arrays, each
// starting on a 128-byte boundary (WMMA wants 32).
struct SharedCarver {
  unsigned char* next;
  template <typename T>
  __device__ T* take(int64_t count) {
    T* at = reinterpret_cast<T*>(next);
    next += (count * static_cast<int64_t>(sizeof(T)) + 127) / 128 * 128;
    return at;
  }
};

// Bytes a carver takes for `count` values of T.
template <typename T>
constexpr int64_t carved(int64_t count) {
  return (count * static_cast<int64_t>(sizeof(T)) + 127) / 128 * 128;
}

// How the kernels may read global memory: 16 bytes at a time where the
// operands' addresses and row widths allow it (the host checks).
struct WideReads {
  bool qkv = false;   // 8 bf16 of a QKV row at a time
  bool dout = false;  // 4 floats of an output-gradient row at a time
};

// Rows [first, first + kRows) of one head's bf16 operand at `column` into
// tile [kRows][kTileLd<D>]; rows past the sequence read as zeros.
template <int D>
__device__ void stage_bf16(uint16_t* tile, const uint16_t* qkv, const FlashLayout& at, int64_t b,
                           int64_t first, int64_t column, bool wide) {
  if (wide) {
    constexpr int kVectors = D / 8;
    for (int e = threadIdx.x; e < kRows * kVectors; e += blockDim.x) {
      const int r = e / kVectors, c = e % kVectors * 8;
      uint4 v = make_uint4(0u, 0u, 0u, 0u);
      if (first + r < at.seq)
        v = *reinterpret_cast<const uint4*>(qkv + at.qkv_at(b, first + r, column + c));
      *reinterpret_cast<uint4*>(tile + r * kTileLd<D> + c) = v;
    }
    return;
  }
  for (int e = threadIdx.x; e < kRows * D; e += blockDim.x) {
    const int r = e / D, c = e % D;
    tile[r * kTileLd<D> + c] =
        first + r < at.seq ? qkv[at.qkv_at(b, first + r, column + c)] : uint16_t{0};
  }
}

// The same from the float32 output-gradient rows, rounded to bf16.
template <int D>
__device__ void stage_gradient_bf16(uint16_t* tile, const float* dout, const FlashLayout& at,
                                    int64_t b, int64_t h, int64_t first, bool wide) {
  if (wide) {
    constexpr int kVectors = D / 4;
    for (int e = threadIdx.x; e < kRows * kVectors; e += blockDim.x) {
      const int r = e / kVectors, c = e % kVectors * 4;
      float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (first + r < at.seq) v = *reinterpret_cast<const float4*>(dout + at.out_at(b, first + r, h) + c);
      const uint32_t low = bf16_math::to_bf16_bits(v.x) | (uint32_t{bf16_math::to_bf16_bits(v.y)} << 16);
      const uint32_t high =
          bf16_math::to_bf16_bits(v.z) | (uint32_t{bf16_math::to_bf16_bits(v.w)} << 16);
      *reinterpret_cast<uint2*>(tile + r * kTileLd<D> + c) = make_uint2(low, high);
    }
    return;
  }
  for (int e = threadIdx.x; e < kRows * D; e += blockDim.x) {
    const int r = e / D, c = e % D;
    tile[r * kTileLd<D> + c] = first + r < at.seq
                                   ? bf16_math::to_bf16_bits(dout[at.out_at(b, first + r, h) + c])
                                   : uint16_t{0};
  }
}

// lse and D_i of rows [first, first + kRows) of head h (0 past the sequence).
__device__ void stage_row_values(float* lse_tile, float* dot_tile, const float* lse,
                                 const float* row_dots, const FlashLayout& at, int64_t b, int64_t h,
                                 int64_t first) {
  for (int e = threadIdx.x; e < kRows; e += blockDim.x) {
    const bool in = first + e < at.seq;
    lse_tile[e] = in ? lse[at.row_at(b, h, first + e)] : 0.0f;
    dot_tile[e] = in ? row_dots[at.row_at(b, h, first + e)] : 0.0f;
  }
}

__device__ const Bf16* bf16_of(const uint16_t* p) { return reinterpret_cast<const Bf16*>(p); }

// out[16 x 64] (rows 16w.. of a float [kRows][kSquareLd]) of warp w = a[16 x
// D] (rows 16w.. of a bf16 tile) times b^T, b a bf16 tile: one row of a
// against every row of b (Q K^T, dO V^T, K Q^T, V dO^T). Each of a's pieces
// is loaded once, for the four products it takes part in.
template <int D>
__device__ void rows_times_rows(const uint16_t* a, const uint16_t* b, float* out, int warp) {
  Accumulator acc[kRows / kPiece];
#pragma unroll
  for (int n = 0; n < kRows / kPiece; ++n) wmma::fill_fragment(acc[n], 0.0f);
#pragma unroll
  for (int k = 0; k < D / kPiece; ++k) {
    ARow left;
    wmma::load_matrix_sync(left, bf16_of(a) + warp * kPiece * kTileLd<D> + k * kPiece, kTileLd<D>);
#pragma unroll
    for (int n = 0; n < kRows / kPiece; ++n) {
      BCol right;  // b's rows as the columns of b^T
      wmma::load_matrix_sync(right, bf16_of(b) + n * kPiece * kTileLd<D> + k * kPiece, kTileLd<D>);
      wmma::mma_sync(acc[n], left, right, acc[n]);
    }
  }
#pragma unroll
  for (int n = 0; n < kRows / kPiece; ++n)
    wmma::store_matrix_sync(out + warp * kPiece * kSquareLd + n * kPiece, acc[n], kSquareLd,
                            wmma::mem_row_major);
}

// acc[n] (16 x 16 pieces of warp w's 16 x D rows) += p[16 x 64] (rows 16w..
// of a bf16 [kRows][kSquareBf16Ld]) times b (a bf16 tile, [kRows][D]): P V,
// P^T dO, dS^T Q, dS K.
template <int D>
__device__ void accumulate_product(Accumulator (&acc)[D / kPiece], const uint16_t* p,
                                   const uint16_t* b, int warp) {
#pragma unroll
  for (int k = 0; k < kRows / kPiece; ++k) {
    ARow left;
    wmma::load_matrix_sync(left, bf16_of(p) + warp * kPiece * kSquareBf16Ld + k * kPiece,
                           kSquareBf16Ld);
#pragma unroll
    for (int n = 0; n < D / kPiece; ++n) {
      BRow right;
      wmma::load_matrix_sync(right, bf16_of(b) + k * kPiece * kTileLd<D> + n * kPiece, kTileLd<D>);
      wmma::mma_sync(acc[n], left, right, acc[n]);
    }
  }
}

template <int D>
__device__ void zero(Accumulator (&acc)[D / kPiece]) {
#pragma unroll
  for (int n = 0; n < D / kPiece; ++n) wmma::fill_fragment(acc[n], 0.0f);
}

// Warp w's accumulated rows, times `scale`, into rows 16w.. of a float [kRows][kRowsLd<D>].
template <int D>
__device__ void store_rows(Accumulator (&acc)[D / kPiece], float scale, float* rows, int warp) {
#pragma unroll
  for (int n = 0; n < D / kPiece; ++n) {
#pragma unroll
    for (int e = 0; e < acc[n].num_elements; ++e) acc[n].x[e] *= scale;
    wmma::store_matrix_sync(rows + warp * kPiece * kRowsLd<D> + n * kPiece, acc[n], kRowsLd<D>,
                            wmma::mem_row_major);
  }
}

template <int D>
constexpr int64_t forward_shared_bytes() {
  return 3 * carved<uint16_t>(kRows * kTileLd<D>) + carved<float>(kRows * kSquareLd) +
         carved<uint16_t>(kRows * kSquareBf16Ld) + carved<float>(kRows * kRowsLd<D>) +
         2 * carved<float>(kRows);
}

// The forward keeps O in shared memory, not in fragments: the online softmax
// rescales its rows after every tile, and a fragment's layout is opaque.
template <int D>
__global__ void __launch_bounds__(kThreads)
    mma_forward_kernel(const uint16_t* qkv, FlashLayout at, BlockDropoutKey dropout,
                       WideReads wide, float* out, float* lse) {
  extern __shared__ __align__(128) unsigned char shared[];
  SharedCarver carve{shared};
  uint16_t* q_tile = carve.take<uint16_t>(kRows * kTileLd<D>);
  uint16_t* k_tile = carve.take<uint16_t>(kRows * kTileLd<D>);
  uint16_t* v_tile = carve.take<uint16_t>(kRows * kTileLd<D>);
  float* scores = carve.take<float>(kRows * kSquareLd);
  uint16_t* p_tile = carve.take<uint16_t>(kRows * kSquareBf16Ld);
  float* o_rows = carve.take<float>(kRows * kRowsLd<D>);
  float* row_max = carve.take<float>(kRows);
  float* row_sum = carve.take<float>(kRows);

  const int64_t b = blockIdx.x / at.heads, h = blockIdx.x % at.heads;
  // The last queries first: under the causal mask they see the most keys, and
  // the blocks that start last should be the short ones.
  const int64_t first = static_cast<int64_t>(gridDim.y - 1 - blockIdx.y) * kRows;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t k_column = at.k_column_of_group(h / at.group);
  stage_bf16<D>(q_tile, qkv, at, b, first, at.q_column(h), wide.qkv);
  for (int e = threadIdx.x; e < kRows * kRowsLd<D>; e += blockDim.x) o_rows[e] = 0.0f;
  for (int e = threadIdx.x; e < kRows; e += blockDim.x) {
    row_max[e] = -INFINITY;
    row_sum[e] = 0.0f;
  }
  const int64_t key_end = at.causal ? smaller(at.seq, first + kRows) : at.seq;
  for (int64_t k0 = 0; k0 < key_end; k0 += kRows) {
    __syncthreads();  // the previous tile's K and V are read
    stage_bf16<D>(k_tile, qkv, at, b, k0, k_column, wide.qkv);
    stage_bf16<D>(v_tile, qkv, at, b, k0, k_column + D, wide.qkv);
    __syncthreads();
    rows_times_rows<D>(q_tile, k_tile, scores, warp);
    __syncwarp();
    // The warp's rows one at a time, its lanes across the 64 columns (lane,
    // lane + 32): consecutive lanes touch consecutive words of shared memory.
    for (int row = 0; row < kPiece; ++row) {
      const int r = warp * kPiece + row;
      const int64_t i = first + r;
      const int64_t visible = i < at.seq ? at.visible_keys(i) : 0;
      float score[2];
      float tile_max = -INFINITY;
      for (int t = 0; t < 2; ++t) {
        const int c = lane + 32 * t;
        score[t] = k0 + c < visible ? scores[r * kSquareLd + c] * at.scale : -INFINITY;
        tile_max = fmaxf(tile_max, score[t]);
      }
      tile_max = warp_max(tile_max);
      const float old_max = row_max[r];
      const float new_max = fmaxf(old_max, tile_max);
      const float shrink = old_max == -INFINITY ? 0.0f : expf(old_max - new_max);
      float sum = 0.0f;
      for (int t = 0; t < 2; ++t) {
        const int c = lane + 32 * t;
        float weighted = 0.0f;
        if (k0 + c < visible) {
          const float p = expf(score[t] - new_max);
          sum += p;
          weighted = p * flash_math::dropout_weight(dropout, at, b, h, i, k0 + c);
        }
        reinterpret_cast<Bf16*>(p_tile)[r * kSquareBf16Ld + c] = to_bf16(weighted);
      }
      sum = warp_sum(sum);
      for (int c = lane; c < D; c += 32) o_rows[r * kRowsLd<D> + c] *= shrink;
      __syncwarp();  // every lane has read row_max[r] before lane 0 writes it
      if (lane == 0) {
        row_max[r] = new_max;
        row_sum[r] = row_sum[r] * shrink + sum;
      }
    }
    __syncwarp();
    Accumulator acc[D / kPiece];
#pragma unroll
    for (int n = 0; n < D / kPiece; ++n)
      wmma::load_matrix_sync(acc[n], o_rows + warp * kPiece * kRowsLd<D> + n * kPiece, kRowsLd<D>,
                             wmma::mem_row_major);
    accumulate_product<D>(acc, p_tile, v_tile, warp);
    store_rows<D>(acc, 1.0f, o_rows, warp);
    __syncwarp();
  }
  __syncthreads();
  for (int e = threadIdx.x; e < kRows * D; e += blockDim.x) {
    const int row = e / D, c = e % D;
    if (first + row < at.seq)
      out[at.out_at(b, first + row, h) + c] = o_rows[row * kRowsLd<D> + c] / row_sum[row];
  }
  for (int e = threadIdx.x; e < kRows; e += blockDim.x)
    if (first + e < at.seq) lse[at.row_at(b, h, first + e)] = row_max[e] + logf(row_sum[e]);
}

// D_i = dO_i . O_i per (sequence, head, query).
__global__ void row_dot_kernel(const float* out, const float* dout, FlashLayout at,
                               float* row_dots) {
  const int64_t count = at.batch * at.heads * at.seq;
  PIPELAB_GRID_STRIDE_LOOP(row, count) {
    const int64_t i = row % at.seq, h = (row / at.seq) % at.heads, b = row / (at.seq * at.heads);
    const int64_t at_out = at.out_at(b, i, h);
    float sum = 0.0f;
    for (int64_t c = 0; c < at.head_dim; ++c) sum += dout[at_out + c] * out[at_out + c];
    row_dots[row] = sum;
  }
}

// The backward kernels' S and dP share one float region with the rows on
// their way out (after the last tile).
template <int D>
constexpr int64_t kScratchFloats =
    2 * kRows * kSquareLd > kRows * kRowsLd<D> ? 2 * kRows * kSquareLd : kRows * kRowsLd<D>;

template <int D>
constexpr int64_t key_value_shared_bytes() {
  return 4 * carved<uint16_t>(kRows * kTileLd<D>) + carved<float>(kScratchFloats<D>) +
         2 * carved<uint16_t>(kRows * kSquareBf16Ld) + 2 * carved<float>(kRows);
}

// dK and dV of 64 keys of key/value head g (each warp 16 of them, accumulated
// in fragments), over the group's heads and every query that sees them.
template <int D>
__global__ void __launch_bounds__(kThreads)
    mma_key_value_kernel(const uint16_t* qkv, const float* dout, const float* lse,
                         const float* row_dots, FlashLayout at, BlockDropoutKey dropout,
                         WideReads wide, float* dqkv) {
  extern __shared__ __align__(128) unsigned char shared[];
  SharedCarver carve{shared};
  uint16_t* k_tile = carve.take<uint16_t>(kRows * kTileLd<D>);
  uint16_t* v_tile = carve.take<uint16_t>(kRows * kTileLd<D>);
  uint16_t* q_tile = carve.take<uint16_t>(kRows * kTileLd<D>);
  uint16_t* do_tile = carve.take<uint16_t>(kRows * kTileLd<D>);
  float* scratch = carve.take<float>(kScratchFloats<D>);
  float* scores_t = scratch;                         // S^T: [key][query]
  float* gradient_t = scratch + kRows * kSquareLd;   // dP^T
  uint16_t* p_t = carve.take<uint16_t>(kRows * kSquareBf16Ld);   // (P w)^T, bf16
  uint16_t* ds_t = carve.take<uint16_t>(kRows * kSquareBf16Ld);  // dS^T, bf16
  float* lse_tile = carve.take<float>(kRows);
  float* dot_tile = carve.take<float>(kRows);

  const int64_t kv_heads = at.kv_heads();
  const int64_t b = blockIdx.x / kv_heads, g = blockIdx.x % kv_heads;
  const int64_t first_key = static_cast<int64_t>(blockIdx.y) * kRows;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t k_column = at.k_column_of_group(g);
  stage_bf16<D>(k_tile, qkv, at, b, first_key, k_column, wide.qkv);
  stage_bf16<D>(v_tile, qkv, at, b, first_key, k_column + D, wide.qkv);
  Accumulator dk[D / kPiece], dv[D / kPiece];
  zero<D>(dk);
  zero<D>(dv);
  const int64_t query_start = at.first_query_seeing(first_key);
  for (int64_t member = 0; member < at.group; ++member) {
    const int64_t h = g * at.group + member;
    for (int64_t i0 = query_start; i0 < at.seq; i0 += kRows) {
      __syncthreads();  // the previous tile is read
      stage_bf16<D>(q_tile, qkv, at, b, i0, at.q_column(h), wide.qkv);
      stage_gradient_bf16<D>(do_tile, dout, at, b, h, i0, wide.dout);
      stage_row_values(lse_tile, dot_tile, lse, row_dots, at, b, h, i0);
      __syncthreads();
      rows_times_rows<D>(k_tile, q_tile, scores_t, warp);
      rows_times_rows<D>(v_tile, do_tile, gradient_t, warp);
      __syncwarp();
      // The warp's key rows one at a time, its lanes across the 64 queries.
      for (int row = 0; row < kPiece; ++row) {
        const int r = warp * kPiece + row;
        const int64_t j = first_key + r;
        for (int t = 0; t < 2; ++t) {
          const int c = lane + 32 * t;
          const int64_t i = i0 + c;
          const bool valid = j < at.seq && i < at.seq && i >= at.first_query_seeing(j);
          float p = 0.0f, w = 0.0f;
          if (valid) {
            p = expf(scores_t[r * kSquareLd + c] * at.scale - lse_tile[c]);
            w = flash_math::dropout_weight(dropout, at, b, h, i, j);
          }
          const float dp = w == 0.0f ? 0.0f : w * gradient_t[r * kSquareLd + c];
          reinterpret_cast<Bf16*>(p_t)[r * kSquareBf16Ld + c] = to_bf16(p * w);
          reinterpret_cast<Bf16*>(ds_t)[r * kSquareBf16Ld + c] = to_bf16(p * (dp - dot_tile[c]));
        }
      }
      __syncwarp();
      accumulate_product<D>(dv, p_t, do_tile, warp);
      accumulate_product<D>(dk, ds_t, q_tile, warp);
    }
  }
  // Out through shared memory (rows past the sequence are not written): dK, then dV.
  float* rows = scratch;
  __syncthreads();  // every warp is done with S and dP
  store_rows<D>(dk, at.scale, rows, warp);
  __syncthreads();
  for (int e = threadIdx.x; e < kRows * D; e += blockDim.x) {
    const int row = e / D, c = e % D;
    if (first_key + row < at.seq)
      dqkv[at.qkv_at(b, first_key + row, k_column) + c] = rows[row * kRowsLd<D> + c];
  }
  __syncthreads();
  store_rows<D>(dv, 1.0f, rows, warp);
  __syncthreads();
  for (int e = threadIdx.x; e < kRows * D; e += blockDim.x) {
    const int row = e / D, c = e % D;
    if (first_key + row < at.seq)
      dqkv[at.qkv_at(b, first_key + row, k_column + D) + c] = rows[row * kRowsLd<D> + c];
  }
}

template <int D>
constexpr int64_t query_shared_bytes() {
  return 4 * carved<uint16_t>(kRows * kTileLd<D>) + carved<float>(kScratchFloats<D>) +
         carved<uint16_t>(kRows * kSquareBf16Ld) + 2 * carved<float>(kRows);
}

// dQ of 64 queries of head h (each warp 16 of them, accumulated in
// fragments), over the keys they see.
template <int D>
__global__ void __launch_bounds__(kThreads)
    mma_query_kernel(const uint16_t* qkv, const float* dout, const float* lse,
                     const float* row_dots, FlashLayout at, BlockDropoutKey dropout,
                     WideReads wide, float* dqkv) {
  extern __shared__ __align__(128) unsigned char shared[];
  SharedCarver carve{shared};
  uint16_t* q_tile = carve.take<uint16_t>(kRows * kTileLd<D>);
  uint16_t* do_tile = carve.take<uint16_t>(kRows * kTileLd<D>);
  uint16_t* k_tile = carve.take<uint16_t>(kRows * kTileLd<D>);
  uint16_t* v_tile = carve.take<uint16_t>(kRows * kTileLd<D>);
  float* scratch = carve.take<float>(kScratchFloats<D>);
  float* scores = scratch;
  float* gradient = scratch + kRows * kSquareLd;
  uint16_t* ds_tile = carve.take<uint16_t>(kRows * kSquareBf16Ld);
  float* lse_tile = carve.take<float>(kRows);
  float* dot_tile = carve.take<float>(kRows);

  const int64_t b = blockIdx.x / at.heads, h = blockIdx.x % at.heads;
  // The last queries first: under the causal mask they see the most keys, and
  // the blocks that start last should be the short ones.
  const int64_t first = static_cast<int64_t>(gridDim.y - 1 - blockIdx.y) * kRows;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t k_column = at.k_column_of_group(h / at.group);
  stage_bf16<D>(q_tile, qkv, at, b, first, at.q_column(h), wide.qkv);
  stage_gradient_bf16<D>(do_tile, dout, at, b, h, first, wide.dout);
  stage_row_values(lse_tile, dot_tile, lse, row_dots, at, b, h, first);
  Accumulator dq[D / kPiece];
  zero<D>(dq);
  const int64_t key_end = at.causal ? smaller(at.seq, first + kRows) : at.seq;
  for (int64_t k0 = 0; k0 < key_end; k0 += kRows) {
    __syncthreads();
    stage_bf16<D>(k_tile, qkv, at, b, k0, k_column, wide.qkv);
    stage_bf16<D>(v_tile, qkv, at, b, k0, k_column + D, wide.qkv);
    __syncthreads();
    rows_times_rows<D>(q_tile, k_tile, scores, warp);
    rows_times_rows<D>(do_tile, v_tile, gradient, warp);
    __syncwarp();
    // The warp's query rows one at a time, its lanes across the 64 keys.
    for (int row = 0; row < kPiece; ++row) {
      const int r = warp * kPiece + row;
      const int64_t i = first + r;
      const int64_t visible = i < at.seq ? at.visible_keys(i) : 0;
      for (int t = 0; t < 2; ++t) {
        const int c = lane + 32 * t;
        const int64_t j = k0 + c;
        float ds = 0.0f;
        if (j < visible) {
          const float p = expf(scores[r * kSquareLd + c] * at.scale - lse_tile[r]);
          const float w = flash_math::dropout_weight(dropout, at, b, h, i, j);
          const float dp = w == 0.0f ? 0.0f : w * gradient[r * kSquareLd + c];
          ds = p * (dp - dot_tile[r]);
        }
        reinterpret_cast<Bf16*>(ds_tile)[r * kSquareBf16Ld + c] = to_bf16(ds);
      }
    }
    __syncwarp();
    accumulate_product<D>(dq, ds_tile, k_tile, warp);
  }
  float* rows = scratch;
  __syncthreads();  // every warp is done with S and dP
  store_rows<D>(dq, at.scale, rows, warp);
  __syncthreads();
  for (int e = threadIdx.x; e < kRows * D; e += blockDim.x) {
    const int row = e / D, c = e % D;
    if (first + row < at.seq)
      dqkv[at.qkv_at(b, first + row, at.q_column(h)) + c] = rows[row * kRowsLd<D> + c];
  }
}

bool aligned_to(const void* pointer, uintptr_t bytes) {
  return reinterpret_cast<uintptr_t>(pointer) % bytes == 0;
}

// Whether rows of QKV (8 bf16) and of dO (4 floats) can be read 16 bytes at
// a time: every row and head starts on a 16-byte boundary.
WideReads wide_reads(const uint16_t* qkv, const float* dout, const FlashLayout& at) {
  WideReads wide;
  wide.qkv = aligned_to(qkv, 16) && at.qkv_width() % 8 == 0 && at.head_dim % 8 == 0;
  wide.dout = dout != nullptr && aligned_to(dout, 16) && at.width() % 4 == 0 && at.head_dim % 4 == 0;
  return wide;
}

unsigned tiles(int64_t seq) { return static_cast<unsigned>((seq + kRows - 1) / kRows); }

// Launches `kernel` with `bytes` of dynamic shared memory (past the default 48 KiB: opted in).
template <typename Kernel, typename... Args>
void launch(Kernel kernel, dim3 grid, int64_t bytes, cudaStream_t stream, Args... args) {
  PIPELAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(bytes)));
  kernel<<<grid, kThreads, static_cast<size_t>(bytes), stream>>>(args...);
  PIPELAB_CHECK_LAUNCH();
}

template <int D>
void forward_for(const uint16_t* qkv, const FlashLayout& at, const BlockDropoutKey& dropout,
                 float* out, float* lse, cudaStream_t stream) {
  launch(mma_forward_kernel<D>, dim3(static_cast<unsigned>(at.batch * at.heads), tiles(at.seq)),
         forward_shared_bytes<D>(), stream, qkv, at, dropout, wide_reads(qkv, nullptr, at), out,
         lse);
}

template <int D>
void backward_for(const uint16_t* qkv, const float* out, const float* dout, const float* lse,
                  const FlashLayout& at, const BlockDropoutKey& dropout, float* row_dots,
                  float* dqkv, cudaStream_t stream) {
  const int64_t rows = at.batch * at.heads * at.seq;
  const WideReads wide = wide_reads(qkv, dout, at);
  row_dot_kernel<<<grid_for(rows), kBlockThreads, 0, stream>>>(out, dout, at, row_dots);
  PIPELAB_CHECK_LAUNCH();
  launch(mma_query_kernel<D>, dim3(static_cast<unsigned>(at.batch * at.heads), tiles(at.seq)),
         query_shared_bytes<D>(), stream, qkv, dout, lse, static_cast<const float*>(row_dots), at,
         dropout, wide, dqkv);
  launch(mma_key_value_kernel<D>,
         dim3(static_cast<unsigned>(at.batch * at.kv_heads()), tiles(at.seq)),
         key_value_shared_bytes<D>(), stream, qkv, dout, lse, static_cast<const float*>(row_dots),
         at, dropout, wide, dqkv);
}

}  // namespace

bool flash_attention_mma_supports(int64_t head_dim) {
  return head_dim == 16 || head_dim == 32 || head_dim == 64 || head_dim == 128;
}

void flash_attention_mma_forward(const uint16_t* qkv, const FlashLayout& layout,
                                 const BlockDropoutKey& dropout, float* out, float* lse,
                                 cudaStream_t stream) {
  if (layout.batch * layout.heads * layout.seq == 0) return;
  switch (layout.head_dim) {
    case 16:
      return forward_for<16>(qkv, layout, dropout, out, lse, stream);
    case 32:
      return forward_for<32>(qkv, layout, dropout, out, lse, stream);
    case 64:
      return forward_for<64>(qkv, layout, dropout, out, lse, stream);
    case 128:
      return forward_for<128>(qkv, layout, dropout, out, lse, stream);
    default:
      throw std::invalid_argument("tensor-core attention does not take heads of this width");
  }
}

void flash_attention_mma_backward(const uint16_t* qkv, const float* out, const float* dout,
                                  const float* lse, const FlashLayout& layout,
                                  const BlockDropoutKey& dropout, float* row_dots, float* dqkv,
                                  cudaStream_t stream) {
  if (layout.batch * layout.heads * layout.seq == 0) return;
  switch (layout.head_dim) {
    case 16:
      return backward_for<16>(qkv, out, dout, lse, layout, dropout, row_dots, dqkv, stream);
    case 32:
      return backward_for<32>(qkv, out, dout, lse, layout, dropout, row_dots, dqkv, stream);
    case 64:
      return backward_for<64>(qkv, out, dout, lse, layout, dropout, row_dots, dqkv, stream);
    case 128:
      return backward_for<128>(qkv, out, dout, lse, layout, dropout, row_dots, dqkv, stream);
    default:
      throw std::invalid_argument("tensor-core attention does not take heads of this width");
  }
}

}  // namespace pipelab::gpu::kernels
