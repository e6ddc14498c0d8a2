#include "core/nn/rotary.h"

#include <cassert>
#include <cmath>
#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

// Turns the head_dim values at `x` (two halves of `half`) by the table's row
// for one position; direction +1 forward, -1 for the transpose.
void turn_head(float* __restrict__ x, const float* __restrict__ cos, const float* __restrict__ sin,
               int64_t half, float direction) {
  for (int64_t c = 0; c < half; ++c) {
    const float a = x[c];
    const float b = x[c + half];
    const float s = direction * sin[c];
    x[c] = a * cos[c] - b * s;
    x[c + half] = b * cos[c] + a * s;
  }
}

void turn(Tensor& qkv, const AttentionShape& shape, const RotaryTable& table, float direction) {
  assert(qkv.rows() == shape.rows() && qkv.cols() == shape.qkv_width());
  assert(table.seq == shape.seq && 2 * table.half == shape.head_dim);
  for (int64_t r = 0; r < qkv.rows(); ++r) {
    const int64_t t = shape.position(r % shape.query_count());
    const float* cos = table.cos.data() + t * table.half;
    const float* sin = table.sin.data() + t * table.half;
    float* row = qkv.row(r);
    for (int64_t h = 0; h < shape.heads; ++h) {
      turn_head(row + shape.q_column(h), cos, sin, table.half, direction);
      if (h % shape.group() == 0)
        turn_head(row + shape.k_column(h), cos, sin, table.half, direction);
    }
  }
}

}  // namespace

RotaryTable rotary_table(int64_t seq, int64_t head_dim, double theta) {
  if (seq <= 0 || head_dim <= 0 || head_dim % 2 != 0)
    throw std::invalid_argument(
        "rotary position embeddings turn pairs of a head's values: head_dim (" +
        std::to_string(head_dim) +
        ") must be even and positive; choose heads so that dim / heads is even");
  if (!(theta > 0 && std::isfinite(theta)))
    throw std::invalid_argument(
        "rotary position embeddings need a positive, finite base theta, got " +
        std::to_string(theta));
  RotaryTable table;
  table.seq = seq;
  table.half = head_dim / 2;
  table.cos.resize(static_cast<size_t>(seq * table.half));
  table.sin.resize(table.cos.size());
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t c = 0; c < table.half; ++c) {
      const double frequency =
          std::pow(theta, -2.0 * static_cast<double>(c) / static_cast<double>(head_dim));
      const double angle = static_cast<double>(t) * frequency;
      table.cos[static_cast<size_t>(t * table.half + c)] = static_cast<float>(std::cos(angle));
      table.sin[static_cast<size_t>(t * table.half + c)] = static_cast<float>(std::sin(angle));
    }
  return table;
}

void rotary_forward(Tensor& qkv, const AttentionShape& shape, const RotaryTable& table) {
  turn(qkv, shape, table, 1.0f);
}

void rotary_backward(Tensor& dqkv, const AttentionShape& shape, const RotaryTable& table) {
  turn(dqkv, shape, table, -1.0f);
}

}  // namespace pipelab
