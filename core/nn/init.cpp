#include "core/nn/init.h"

#include <cassert>
#include <cmath>

#include "core/nn/counter_rng.h"
#include "core/nn/linear.h"

namespace pipelab {
namespace {

double uniform_bound(int64_t in_features) {
  return in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
}

}  // namespace

void init_uniform_block(Tensor& block, uint64_t key, double bound, int64_t full_cols,
                        int64_t row_begin, int64_t col_begin) {
  assert(row_begin >= 0 && col_begin >= 0 && col_begin + block.cols() <= full_cols);
  for (int64_t r = 0; r < block.rows(); ++r) {
    float* row = block.row(r);
    const int64_t full_row_start = (row_begin + r) * full_cols + col_begin;
    for (int64_t c = 0; c < block.cols(); ++c)
      row[c] =
          symmetric_uniform(combine_key(key, static_cast<uint64_t>(full_row_start + c)), bound);
  }
}

void init_linear_weight(Tensor& weight, uint64_t seed, int layer, int64_t in_features,
                        int64_t out_features, int64_t row_begin, int64_t col_begin) {
  assert(row_begin >= 0 && row_begin + weight.rows() <= in_features);
  assert(col_begin >= 0 && col_begin + weight.cols() <= out_features);
  init_uniform_block(weight, layer_key(seed, RandomStream::LinearWeight, layer),
                     uniform_bound(in_features), out_features, row_begin, col_begin);
}

void init_linear_bias(Tensor& bias, uint64_t seed, int layer, int64_t in_features,
                      int64_t out_features, int64_t col_begin) {
  assert(bias.rows() <= 1 && col_begin >= 0 && col_begin + bias.cols() <= out_features);
  (void)out_features;
  const uint64_t key = layer_key(seed, RandomStream::LinearBias, layer);
  const double bound = uniform_bound(in_features);
  for (int64_t c = 0; c < bias.size(); ++c)
    bias.data()[c] =
        symmetric_uniform(combine_key(key, static_cast<uint64_t>(col_begin + c)), bound);
}

void init_linear(LinearLayer& layer, uint64_t seed) {
  init_linear_weight(layer.weight(), seed, layer.index(), layer.in_features(),
                     layer.out_features());
  if (layer.has_bias())
    init_linear_bias(layer.bias(), seed, layer.index(), layer.in_features(), layer.out_features());
}

void init_embedding_table(Tensor& table, uint64_t seed, RandomStream stream, int layer,
                          int64_t row_begin) {
  init_uniform_block(table, layer_key(seed, stream, layer), kEmbeddingStd * std::sqrt(3.0),
                     table.cols(), row_begin);
}

}  // namespace pipelab
