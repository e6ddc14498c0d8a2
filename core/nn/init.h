// Seeded initialisation of linear layers that depends only on the experiment's
// seed, the layer's index in the model and the element's position in the full
// (unsplit) layer: never on the pipeline split or the tensor-parallel shard.
//
// Like PyTorch's nn.Linear default, every weight and bias value is drawn from
// uniform(-1/sqrt(in), 1/sqrt(in)). Full weight element (i, j) of W [in, out]
// and bias element j are (counter_rng.h):
//   W[i][j] = symmetric_uniform(combine_key(layer_key(seed, LinearWeight, layer), i * out + j),
//   bound) b[j]    = symmetric_uniform(combine_key(layer_key(seed, LinearBias, layer), j), bound)
// A shard fills just its slice: the tensor holds rows [row_begin, row_begin +
// rows) and columns [col_begin, col_begin + cols) of the full matrix.
#pragma once

#include <cstdint>

#include "core/nn/counter_rng.h"
#include "core/nn/tensor.h"

namespace pipelab {

class LinearLayer;

// The rule every initialiser here shares: `block` holds rows [row_begin, ...)
// and columns [col_begin, ...) of a full matrix `full_cols` wide, and its
// element at full position (i, j) is symmetric_uniform(combine_key(key, i *
// full_cols + j), bound).
void init_uniform_block(Tensor& block, uint64_t key, double bound, int64_t full_cols,
                        int64_t row_begin = 0, int64_t col_begin = 0);

void init_linear_weight(Tensor& weight, uint64_t seed, int layer, int64_t in_features,
                        int64_t out_features, int64_t row_begin = 0, int64_t col_begin = 0);
// bias is [1, cols]: columns [col_begin, col_begin + cols) of the full [1, out] bias.
void init_linear_bias(Tensor& bias, uint64_t seed, int layer, int64_t in_features,
                      int64_t out_features, int64_t col_begin = 0);

// Fills a whole (unsplit) linear layer: weight and bias.
void init_linear(LinearLayer& layer, uint64_t seed);

// Embedding tables (embedding.h): uniform with standard deviation 0.02, the
// scale of GPT-2's normal(0, 0.02) (the counter generator draws uniforms), so
// bound = 0.02 sqrt(3). Full element (row, c) of the [rows, dim] table is keyed
// combine_key(layer_key(seed, stream, layer), row * dim + c); a vocabulary
// shard's table holds rows [row_begin, row_begin + table.rows()).
inline constexpr double kEmbeddingStd = 0.02;
void init_embedding_table(Tensor& table, uint64_t seed, RandomStream stream, int layer,
                          int64_t row_begin = 0);

}  // namespace pipelab
