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

#include "core/nn/tensor.h"

namespace pipelab {

class LinearLayer;

void init_linear_weight(Tensor& weight, uint64_t seed, int layer, int64_t in_features,
                        int64_t out_features, int64_t row_begin = 0, int64_t col_begin = 0);
// bias is [1, cols]: columns [col_begin, col_begin + cols) of the full [1, out] bias.
void init_linear_bias(Tensor& bias, uint64_t seed, int layer, int64_t in_features,
                      int64_t out_features, int64_t col_begin = 0);

// Fills a whole (unsplit) linear layer: weight and bias.
void init_linear(LinearLayer& layer, uint64_t seed);

}  // namespace pipelab
