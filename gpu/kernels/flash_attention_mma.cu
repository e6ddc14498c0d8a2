// Fused attention on tensor cores, for bf16 q, k and v (bf16-mixed): the
// same algorithm and formulas as flash_attention.cu's float kernels
// (flash_attention_math.h), with the products of each 64 x 64 tile (S = Q K^T,
// O += P V in the forward; S, dP = dO V^T, dV += P^T dO, dK += dS^T Q and
// dQ += dS K in the backward) as m16n8k16 bf16 mma.sync instructions
// accumulating in float32, FlashAttention-2's way: the instruction's register
// layouts are documented (PTX ISA, "Matrix Fragments for mma.m16n8k16"), so
// each warp keeps its 16 rows of S, P and the accumulators in registers and
// does the softmax there. The rest stays float32: the scores, the online
// softmax, lse and D_i; P, dS and dO are rounded to bf16 as the products'
// inputs, as the unfused bf16 path rounds them. The exponentials are taken
// base 2 (exp2f, one hardware instruction), the scores scaled by log2(e).
//
// Each block holds 64 rows (4 warps, 16 rows each) and stages the other
// operand 64 rows at a time in shared memory, as rows; ldmatrix hands each
// lane its operand pieces, transposed (.trans) where a product sums over the
// tile's rows (the keys or queries). Tiles that every row sees whole (inside
// the sequence, below the causal diagonal) skip the mask. The forward and dQ
// kernels take 64 queries each, the dK/dV kernel 64 keys, over every query of
// the group's heads that sees them: every output element is written by one
// block (no atomics), so results are the same from run to run.
#include <cuda_bf16.h>

#include <stdexcept>

#include "gpu/kernels/flash_attention.h"
#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

using flash_math::FlashLayout;

constexpr int kRows = 64;  // a block's own rows, and the rows staged per tile
constexpr int kWarps = 4;  // 16 rows each
constexpr int kThreads = 32 * kWarps;
constexpr int kTiles = kRows / 8;  // the 8-column pieces of a 64-wide S
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// Leading dimension of a staged tile ([kRows][D] bf16), padded by 16 bytes so
// that the 8 rows an 8 x 8 matrix load reads start in different banks.
template <int D>
constexpr int kRowLd = D + 8;

__device__ inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

// Where a lane's fragment values sit (PTX's m16n8k16 layouts): group g = lane
// / 4 names rows g and g + 8 of the warp's 16, quad q = lane % 4 the column
// pair 2q, 2q + 1 of each 8-column piece. For ldmatrix, lane / 8 names the 8 x 8
// matrix whose row lane % 8 it points at.
struct Lane {
  int id, g, q;
  __device__ Lane() : id(static_cast<int>(threadIdx.x % 32)), g(id / 4), q(id % 4) {}
};

// Two bf16 at `p` (an even column) as the 32-bit register an mma operand holds.
__device__ inline uint32_t pair_at(const uint16_t* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}

// c += a b for a 16 x 16 bf16 piece a and a 16 x 8 piece b (c 16 x 8, float32).
__device__ inline void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Four 8 x 8 bf16 matrices from shared memory (ldmatrix .x4): each lane
// passes the address of its row (lane % 8 of matrix lane / 8) and receives
// its pair of each matrix, or of each matrix transposed.
template <bool kTransposed>
__device__ inline void load_matrices(uint32_t (&r)[4], const uint16_t* row) {
  const auto address = static_cast<uint32_t>(__cvta_generic_to_shared(row));
  if (kTransposed)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// The A operand of rows [row, row + 16) and columns [col, col + 16) of a
// row-major bf16 tile.
__device__ inline void load_a(uint32_t (&a)[4], const uint16_t* tile, int ld, int row, int col,
                              Lane at) {
  a[0] = pair_at(tile + (row + at.g) * ld + col + 2 * at.q);
  a[1] = pair_at(tile + (row + at.g + 8) * ld + col + 2 * at.q);
  a[2] = pair_at(tile + (row + at.g) * ld + col + 8 + 2 * at.q);
  a[3] = pair_at(tile + (row + at.g + 8) * ld + col + 8 + 2 * at.q);
}

// c[n] += a times the transpose of rows [8n, 8n + 8) of `tile` over columns
// [col, col + 16): the product's columns are the tile's rows, and it sums
// along them (S = Q K^T). Two pieces per ldmatrix: matrices (n, col), (n,
// col + 8), (n + 1, col), (n + 1, col + 8).
template <int kPieces>
__device__ inline void times_rows(float (&c)[kPieces][4], const uint32_t (&a)[4],
                                  const uint16_t* tile, int ld, int col, Lane at) {
  static_assert(kPieces % 2 == 0, "pieces are loaded two at a time");
  const int matrix = at.id / 8, row = at.id % 8;
#pragma unroll
  for (int n = 0; n < kPieces; n += 2) {
    uint32_t b[4];
    load_matrices<false>(b, tile + (8 * (n + matrix / 2) + row) * ld + col + 8 * (matrix % 2));
    mma(c[n], a, b[0], b[1]);
    mma(c[n + 1], a, b[2], b[3]);
  }
}

// c[n] += a times rows [first, first + 16) of `tile`, whose columns [8n, 8n +
// 8) are the product's piece n: the product sums along the tile's rows (P V,
// dS K, P^T dO, dS^T Q), so the matrices load transposed: (first, n), (first
// + 8, n), (first, n + 1), (first + 8, n + 1).
template <int kPieces>
__device__ inline void times_columns(float (&c)[kPieces][4], const uint32_t (&a)[4],
                                     const uint16_t* tile, int ld, int first, Lane at) {
  static_assert(kPieces % 2 == 0, "pieces are loaded two at a time");
  const int matrix = at.id / 8, row = at.id % 8;
#pragma unroll
  for (int n = 0; n < kPieces; n += 2) {
    uint32_t b[4];
    load_matrices<true>(b, tile + (first + 8 * (matrix % 2) + row) * ld + 8 * (n + matrix / 2));
    mma(c[n], a, b[0], b[1]);
    mma(c[n + 1], a, b[2], b[3]);
  }
}

// The A operand of a 16 x 16 piece from accumulators: columns [16k, 16k + 16)
// of a warp's 16 x 64 values (8 pieces of 8 columns), rounded to bf16.
__device__ inline void a_from(uint32_t (&a)[4], const float (&v)[kTiles][4], int k) {
  a[0] = bf16_math::to_bf16_pair_bits(v[2 * k][0], v[2 * k][1]);
  a[1] = bf16_math::to_bf16_pair_bits(v[2 * k][2], v[2 * k][3]);
  a[2] = bf16_math::to_bf16_pair_bits(v[2 * k + 1][0], v[2 * k + 1][1]);
  a[3] = bf16_math::to_bf16_pair_bits(v[2 * k + 1][2], v[2 * k + 1][3]);
}

template <int N>
__device__ inline void zero(float (&c)[N][4]) {
#pragma unroll
  for (int n = 0; n < N; ++n) c[n][0] = c[n][1] = c[n][2] = c[n][3] = 0.0f;
}

// The maximum and the sum over the four lanes that share a row.
__device__ inline float row_max(float value) {
  value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, 1));
  return fmaxf(value, __shfl_xor_sync(0xffffffffu, value, 2));
}
__device__ inline float row_sum(float value) {
  value += __shfl_xor_sync(0xffffffffu, value, 1);
  return value + __shfl_xor_sync(0xffffffffu, value, 2);
}

// How the kernels may read global memory: 16 bytes at a time where the
// operands' addresses and row widths allow it (the host checks).
struct WideReads {
  bool qkv = false;   // 8 bf16 of a QKV row at a time
  bool dout = false;  // 4 floats of an output-gradient row at a time
};

// Rows [first, first + kRows) of one head's bf16 operand at `column`. Rows
// past the sequence read as zeros.
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
      *reinterpret_cast<uint4*>(tile + r * kRowLd<D> + c) = v;
    }
    return;
  }
  for (int e = threadIdx.x; e < kRows * D; e += blockDim.x) {
    const int r = e / D, c = e % D;
    tile[r * kRowLd<D> + c] =
        first + r < at.seq ? qkv[at.qkv_at(b, first + r, column + c)] : uint16_t{0};
  }
}

// The same from the float32 output-gradient rows of head h, rounded to bf16.
template <int D>
__device__ void stage_gradient_bf16(uint16_t* tile, const float* dout, const FlashLayout& at,
                                    int64_t b, int64_t h, int64_t first, bool wide) {
  if (wide) {
    constexpr int kVectors = D / 4;
    for (int e = threadIdx.x; e < kRows * kVectors; e += blockDim.x) {
      const int r = e / kVectors, c = e % kVectors * 4;
      float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (first + r < at.seq)
        v = *reinterpret_cast<const float4*>(dout + at.out_at(b, first + r, h) + c);
      uint2 bits;
      bits.x = bf16_math::to_bf16_pair_bits(v.x, v.y);
      bits.y = bf16_math::to_bf16_pair_bits(v.z, v.w);
      *reinterpret_cast<uint2*>(tile + r * kRowLd<D> + c) = bits;
    }
    return;
  }
  for (int e = threadIdx.x; e < kRows * D; e += blockDim.x) {
    const int r = e / D, c = e % D;
    tile[r * kRowLd<D> + c] =
        bf16_math::to_bf16_bits(first + r < at.seq ? dout[at.out_at(b, first + r, h) + c] : 0.0f);
  }
}

// lse (times log2(e), for exp2f) and D_i of rows [first, first + kRows) of
// head h (0 past the sequence).
__device__ void stage_row_values(float* lse_tile, float* dot_tile, const float* lse,
                                 const float* row_dots, const FlashLayout& at, int64_t b, int64_t h,
                                 int64_t first) {
  for (int e = threadIdx.x; e < kRows; e += blockDim.x) {
    const bool in = first + e < at.seq;
    lse_tile[e] = in ? lse[at.row_at(b, h, first + e)] * kLog2e : 0.0f;
    dot_tile[e] = in ? row_dots[at.row_at(b, h, first + e)] : 0.0f;
  }
}

// A warp's operand pieces for its 16 rows of a row-major tile: [D / 16][4].
template <int D>
__device__ inline void load_rows(uint32_t (&a)[D / 16][4], const uint16_t* tile, int warp,
                                 Lane at) {
#pragma unroll
  for (int k = 0; k < D / 16; ++k) load_a(a[k], tile, kRowLd<D>, 16 * warp, 16 * k, at);
}

// c[n] (8-column pieces of a 16 x 64 result) = the warp's rows a times the
// tile's 64 rows transposed (S = Q K^T, dP = dO V^T, S^T = K Q^T, dP^T = V dO^T).
template <int D>
__device__ inline void rows_times_tile(float (&c)[kTiles][4], const uint32_t (&a)[D / 16][4],
                                       const uint16_t* tile, Lane at) {
  zero(c);
#pragma unroll
  for (int k = 0; k < D / 16; ++k) times_rows<kTiles>(c, a[k], tile, kRowLd<D>, 16 * k, at);
}

// acc (8-column pieces of a 16 x D result) += v (a warp's 16 x 64 values,
// rounded to bf16) times the tile's 64 rows ([64][D]): P V, dS K, P^T dO, dS^T Q.
template <int D>
__device__ inline void accumulate(float (&acc)[D / 8][4], const float (&v)[kTiles][4],
                                  const uint16_t* tile, Lane at) {
#pragma unroll
  for (int k = 0; k < kRows / 16; ++k) {
    uint32_t a[4];
    a_from(a, v, k);
    times_columns<D / 8>(acc, a, tile, kRowLd<D>, 16 * k, at);
  }
}

// Whether every query of [first_query, + kRows) sees every key of
// [first_key, + kRows): both inside the sequence and, under the causal mask,
// the keys at or before the first query.
__device__ inline bool whole_tile(const FlashLayout& at, int64_t first_query, int64_t first_key) {
  return first_query + kRows <= at.seq && first_key + kRows <= at.seq &&
         (!at.causal || first_key + kRows - 1 <= first_query);
}

template <int D>
constexpr int64_t forward_shared_bytes() {
  return 3 * kRows * kRowLd<D> * 2;
}

template <int D>
__global__ void __launch_bounds__(kThreads)
    mma_forward_kernel(const uint16_t* qkv, FlashLayout at, BlockDropoutKey dropout, WideReads wide,
                       float* out, float* lse) {
  extern __shared__ __align__(16) unsigned char shared[];
  uint16_t* q_tile = reinterpret_cast<uint16_t*>(shared);
  uint16_t* k_tile = q_tile + kRows * kRowLd<D>;
  uint16_t* v_tile = k_tile + kRows * kRowLd<D>;

  const int64_t b = blockIdx.x / at.heads, h = blockIdx.x % at.heads;
  // The last queries first: under the causal mask they see the most keys, and
  // the blocks that start last should be the short ones.
  const int64_t first = static_cast<int64_t>(gridDim.y - 1 - blockIdx.y) * kRows;
  const int warp = threadIdx.x / 32;
  const Lane lane;
  const int64_t k_column = at.k_column_of_group(h / at.group);
  const float scale_log2 = at.scale * kLog2e;
  const bool dropping = dropout.p > 0.0f;
  stage_bf16<D>(q_tile, qkv, at, b, first, at.q_column(h), wide.qkv);
  __syncthreads();
  uint32_t qa[D / 16][4];
  load_rows<D>(qa, q_tile, warp, lane);

  // This lane's rows (g and g + 8 of the warp's 16): running max (base 2),
  // sum of its columns' exponentials, and its accumulator columns of O.
  const int64_t rows[2] = {first + 16 * warp + lane.g, first + 16 * warp + lane.g + 8};
  float running_max[2] = {-INFINITY, -INFINITY}, running_sum[2] = {0.0f, 0.0f};
  float o[D / 8][4];
  zero(o);
  const int64_t key_end = at.causal ? smaller(at.seq, first + kRows) : at.seq;
  for (int64_t k0 = 0; k0 < key_end; k0 += kRows) {
    __syncthreads();  // the previous tile's K and V are read
    stage_bf16<D>(k_tile, qkv, at, b, k0, k_column, wide.qkv);
    stage_bf16<D>(v_tile, qkv, at, b, k0, k_column + D, wide.qkv);
    __syncthreads();
    float s[kTiles][4];
    rows_times_tile<D>(s, qa, k_tile, lane);
    const bool whole = whole_tile(at, first, k0);
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < kTiles; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t i = rows[e / 2], key = k0 + 8 * n + 2 * lane.q + e % 2;
        const bool seen = whole || (i < at.seq && key < at.visible_keys(i) && key < at.seq);
        s[n][e] = seen ? s[n][e] * scale_log2 : -INFINITY;
        tile_max[e / 2] = fmaxf(tile_max[e / 2], s[n][e]);
      }
    float shrink[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float new_max = fmaxf(running_max[r], row_max(tile_max[r]));
      shrink[r] = running_max[r] == -INFINITY ? 0.0f : exp2f(running_max[r] - new_max);
      running_max[r] = new_max;
      running_sum[r] *= shrink[r];
    }
#pragma unroll
    for (int n = 0; n < kTiles; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int r = e / 2;
        float p = 0.0f;
        if (s[n][e] != -INFINITY) {
          p = exp2f(s[n][e] - running_max[r]);
          running_sum[r] += p;
          if (dropping)
            p *= flash_math::dropout_weight(dropout, at, b, h, rows[r],
                                            k0 + 8 * n + 2 * lane.q + e % 2);
        }
        s[n][e] = p;  // what weights V
      }
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[n][e] *= shrink[e / 2];
    accumulate<D>(o, s, v_tile, lane);
  }
  float total[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) total[r] = row_sum(running_sum[r]);
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if (rows[r] >= at.seq) continue;
      float* target = out + at.out_at(b, rows[r], h) + 8 * n + 2 * lane.q;
      target[0] = o[n][2 * r] / total[r];
      target[1] = o[n][2 * r + 1] / total[r];
    }
  if (lane.q == 0)
#pragma unroll
    for (int r = 0; r < 2; ++r)
      if (rows[r] < at.seq) lse[at.row_at(b, h, rows[r])] = running_max[r] * kLn2 + logf(total[r]);
}

// D_i = dO_i . O_i per (sequence, head, query): a warp per row, its lanes
// reading the row's consecutive values (O float32 or bf16).
__global__ void row_dot_kernel(flash_math::FlashInput out, const float* dout, FlashLayout at,
                               float* row_dots) {
  const int64_t count = at.batch * at.heads * at.seq;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t warps = static_cast<int64_t>(gridDim.x) * blockDim.x / 32;
  for (int64_t row = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32;
       row < count; row += warps) {
    const int64_t i = row % at.seq, h = (row / at.seq) % at.heads, b = row / (at.seq * at.heads);
    const int64_t at_out = at.out_at(b, i, h);
    float sum = 0.0f;
    for (int64_t c = lane; c < at.head_dim; c += 32) sum += dout[at_out + c] * out[at_out + c];
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lane == 0) row_dots[row] = sum;
  }
}

template <int D>
constexpr int64_t query_shared_bytes() {
  return 4 * kRows * kRowLd<D> * 2;
}

// dQ of 64 queries of head h (each warp 16 of them), over the keys they see.
template <int D>
__global__ void __launch_bounds__(kThreads)
    mma_query_kernel(const uint16_t* qkv, const float* dout, const float* lse,
                     const float* row_dots, FlashLayout at, BlockDropoutKey dropout, WideReads wide,
                     float* dqkv) {
  extern __shared__ __align__(16) unsigned char shared[];
  uint16_t* q_tile = reinterpret_cast<uint16_t*>(shared);
  uint16_t* do_tile = q_tile + kRows * kRowLd<D>;
  uint16_t* k_tile = do_tile + kRows * kRowLd<D>;
  uint16_t* v_tile = k_tile + kRows * kRowLd<D>;

  const int64_t b = blockIdx.x / at.heads, h = blockIdx.x % at.heads;
  const int64_t first = static_cast<int64_t>(gridDim.y - 1 - blockIdx.y) * kRows;
  const int warp = threadIdx.x / 32;
  const Lane lane;
  const int64_t k_column = at.k_column_of_group(h / at.group);
  const float scale_log2 = at.scale * kLog2e;
  const bool dropping = dropout.p > 0.0f;
  stage_bf16<D>(q_tile, qkv, at, b, first, at.q_column(h), wide.qkv);
  stage_gradient_bf16<D>(do_tile, dout, at, b, h, first, wide.dout);
  __syncthreads();
  uint32_t qa[D / 16][4], doa[D / 16][4];
  load_rows<D>(qa, q_tile, warp, lane);
  load_rows<D>(doa, do_tile, warp, lane);
  const int64_t rows[2] = {first + 16 * warp + lane.g, first + 16 * warp + lane.g + 8};
  float row_lse[2], row_dot[2];  // lse times log2(e)
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const bool in = rows[r] < at.seq;
    row_lse[r] = in ? lse[at.row_at(b, h, rows[r])] * kLog2e : 0.0f;
    row_dot[r] = in ? row_dots[at.row_at(b, h, rows[r])] : 0.0f;
  }
  float dq[D / 8][4];
  zero(dq);
  const int64_t key_end = at.causal ? smaller(at.seq, first + kRows) : at.seq;
  for (int64_t k0 = 0; k0 < key_end; k0 += kRows) {
    __syncthreads();
    stage_bf16<D>(k_tile, qkv, at, b, k0, k_column, wide.qkv);
    stage_bf16<D>(v_tile, qkv, at, b, k0, k_column + D, wide.qkv);
    __syncthreads();
    float s[kTiles][4], ds[kTiles][4];
    rows_times_tile<D>(s, qa, k_tile, lane);
    rows_times_tile<D>(ds, doa, v_tile, lane);  // dP, then dS in place
    const bool whole = whole_tile(at, first, k0);
#pragma unroll
    for (int n = 0; n < kTiles; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int r = e / 2;
        const int64_t i = rows[r], key = k0 + 8 * n + 2 * lane.q + e % 2;
        float value = 0.0f;
        if (whole || (i < at.seq && key < at.visible_keys(i) && key < at.seq)) {
          const float p = exp2f(s[n][e] * scale_log2 - row_lse[r]);
          float dp = ds[n][e];
          if (dropping) {
            const float w = flash_math::dropout_weight(dropout, at, b, h, i, key);
            dp = w == 0.0f ? 0.0f : w * dp;
          }
          value = p * (dp - row_dot[r]);
        }
        ds[n][e] = value;
      }
    accumulate<D>(dq, ds, k_tile, lane);
  }
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if (rows[r] >= at.seq) continue;
      float* target = dqkv + at.qkv_at(b, rows[r], at.q_column(h)) + 8 * n + 2 * lane.q;
      target[0] = dq[n][2 * r] * at.scale;
      target[1] = dq[n][2 * r + 1] * at.scale;
    }
}

template <int D>
constexpr int64_t key_value_shared_bytes() {
  return 4 * kRows * kRowLd<D> * 2 + 2 * kRows * 4;
}

// dK and dV of 64 keys of key/value head g (each warp 16 of them), over the
// group's heads and every query that sees them.
template <int D>
__global__ void __launch_bounds__(kThreads)
    mma_key_value_kernel(const uint16_t* qkv, const float* dout, const float* lse,
                         const float* row_dots, FlashLayout at, BlockDropoutKey dropout,
                         WideReads wide, float* dqkv) {
  extern __shared__ __align__(16) unsigned char shared[];
  uint16_t* k_tile = reinterpret_cast<uint16_t*>(shared);
  uint16_t* v_tile = k_tile + kRows * kRowLd<D>;
  uint16_t* q_tile = v_tile + kRows * kRowLd<D>;
  uint16_t* do_tile = q_tile + kRows * kRowLd<D>;
  float* lse_tile = reinterpret_cast<float*>(do_tile + kRows * kRowLd<D>);
  float* dot_tile = lse_tile + kRows;

  const int64_t kv_heads = at.kv_heads();
  const int64_t b = blockIdx.x / kv_heads, g = blockIdx.x % kv_heads;
  const int64_t first_key = static_cast<int64_t>(blockIdx.y) * kRows;
  const int warp = threadIdx.x / 32;
  const Lane lane;
  const int64_t k_column = at.k_column_of_group(g);
  const float scale_log2 = at.scale * kLog2e;
  const bool dropping = dropout.p > 0.0f;
  stage_bf16<D>(k_tile, qkv, at, b, first_key, k_column, wide.qkv);
  stage_bf16<D>(v_tile, qkv, at, b, first_key, k_column + D, wide.qkv);
  __syncthreads();
  uint32_t ka[D / 16][4], va[D / 16][4];
  load_rows<D>(ka, k_tile, warp, lane);
  load_rows<D>(va, v_tile, warp, lane);
  const int64_t keys[2] = {first_key + 16 * warp + lane.g, first_key + 16 * warp + lane.g + 8};
  float dk[D / 8][4], dv[D / 8][4];
  zero(dk);
  zero(dv);
  const int64_t query_start = at.first_query_seeing(first_key);
  for (int64_t member = 0; member < at.group; ++member) {
    const int64_t h = g * at.group + member;
    for (int64_t i0 = query_start; i0 < at.seq; i0 += kRows) {
      __syncthreads();  // the previous tile is read
      stage_bf16<D>(q_tile, qkv, at, b, i0, at.q_column(h), wide.qkv);
      stage_gradient_bf16<D>(do_tile, dout, at, b, h, i0, wide.dout);
      stage_row_values(lse_tile, dot_tile, lse, row_dots, at, b, h, i0);
      __syncthreads();
      float p[kTiles][4], ds[kTiles][4];
      rows_times_tile<D>(p, ka, q_tile, lane);    // S^T, then (P w)^T in place
      rows_times_tile<D>(ds, va, do_tile, lane);  // dP^T, then dS^T in place
      const bool whole = whole_tile(at, i0, first_key);
#pragma unroll
      for (int n = 0; n < kTiles; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int64_t j = keys[e / 2];
          const int c = 8 * n + 2 * lane.q + e % 2;
          const int64_t i = i0 + c;
          float weighted = 0.0f, value = 0.0f;
          if (whole || (j < at.seq && i < at.seq && i >= at.first_query_seeing(j))) {
            const float prob = exp2f(p[n][e] * scale_log2 - lse_tile[c]);
            float w = 1.0f, dp = ds[n][e];
            if (dropping) {
              w = flash_math::dropout_weight(dropout, at, b, h, i, j);
              dp = w == 0.0f ? 0.0f : w * dp;
            }
            weighted = prob * w;
            value = prob * (dp - dot_tile[c]);
          }
          p[n][e] = weighted;
          ds[n][e] = value;
        }
      accumulate<D>(dv, p, do_tile, lane);
      accumulate<D>(dk, ds, q_tile, lane);
    }
  }
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if (keys[r] >= at.seq) continue;
      float* target = dqkv + at.qkv_at(b, keys[r], k_column) + 8 * n + 2 * lane.q;
      target[0] = dk[n][2 * r] * at.scale;
      target[1] = dk[n][2 * r + 1] * at.scale;
      target[D] = dv[n][2 * r];
      target[D + 1] = dv[n][2 * r + 1];
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
  wide.dout =
      dout != nullptr && aligned_to(dout, 16) && at.width() % 4 == 0 && at.head_dim % 4 == 0;
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
void backward_for(const uint16_t* qkv, flash_math::FlashInput out, const float* dout,
                  const float* lse, const FlashLayout& at, const BlockDropoutKey& dropout,
                  float* row_dots, float* dqkv, cudaStream_t stream) {
  const int64_t rows = at.batch * at.heads * at.seq;
  const WideReads wide = wide_reads(qkv, dout, at);
  row_dot_kernel<<<grid_for(rows * 32), kBlockThreads, 0, stream>>>(out, dout, at, row_dots);
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

void flash_attention_mma_backward(const uint16_t* qkv, flash_math::FlashInput out,
                                  const float* dout, const float* lse, const FlashLayout& layout,
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
