#include "core/nn/moe_routing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace pipelab {

int64_t MoeRouting::dropped_total() const {
  return std::accumulate(dropped.begin(), dropped.end(), int64_t{0});
}

MoeRouting route_tokens(const float* probabilities, int64_t tokens, int64_t experts, int64_t top_k,
                        int64_t capacity) {
  MoeRouting routing;
  routing.tokens = tokens;
  routing.experts = experts;
  routing.top_k = top_k;
  routing.capacity = capacity;
  const size_t assignments = static_cast<size_t>(tokens * top_k);
  routing.expert.assign(assignments, 0);
  routing.slot.assign(assignments, -1);
  routing.weight.assign(assignments, 0.0f);
  routing.routed.assign(static_cast<size_t>(experts), 0);
  routing.dropped.assign(static_cast<size_t>(experts), 0);
  routing.first_choice_fraction.assign(static_cast<size_t>(experts), 0.0);
  routing.mean_probability.assign(static_cast<size_t>(experts), 0.0);

  // Each token's top_k experts, most probable first (ties: the lower index).
  std::vector<int32_t> order(static_cast<size_t>(experts));
  for (int64_t t = 0; t < tokens; ++t) {
    const float* p = probabilities + t * experts;
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + top_k, order.end(),
                      [p](int32_t a, int32_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
    double chosen_sum = 0;
    for (int64_t c = 0; c < top_k; ++c) chosen_sum += p[order[static_cast<size_t>(c)]];
    for (int64_t c = 0; c < top_k; ++c) {
      const size_t a = static_cast<size_t>(t * top_k + c);
      const int32_t e = order[static_cast<size_t>(c)];
      routing.expert[a] = e;
      routing.weight[a] = top_k == 1 ? p[e] : static_cast<float>(p[e] / chosen_sum);
    }
    for (int64_t e = 0; e < experts; ++e) routing.mean_probability[static_cast<size_t>(e)] += p[e];
    routing.first_choice_fraction[static_cast<size_t>(order[0])] += 1.0;
  }

  // Slots: choice by choice, each in token order.
  std::vector<int64_t> filled(static_cast<size_t>(experts), 0);
  for (int64_t c = 0; c < top_k; ++c) {
    for (int64_t t = 0; t < tokens; ++t) {
      const size_t a = static_cast<size_t>(t * top_k + c);
      const size_t e = static_cast<size_t>(routing.expert[a]);
      ++routing.routed[e];
      if (filled[e] < capacity) {
        routing.slot[a] = static_cast<int64_t>(e) * capacity + filled[e]++;
      } else {
        ++routing.dropped[e];
        routing.weight[a] = 0.0f;  // contributes nothing, and gets no gradient
      }
    }
  }

  double aux = 0;
  for (size_t e = 0; e < static_cast<size_t>(experts); ++e) {
    routing.first_choice_fraction[e] /= static_cast<double>(tokens);
    routing.mean_probability[e] /= static_cast<double>(tokens);
    aux += routing.first_choice_fraction[e] * routing.mean_probability[e];
  }
  routing.aux_loss = static_cast<double>(experts) * aux;
  return routing;
}

void routing_backward(const MoeRouting& routing, const float* probabilities,
                      const float* weight_grad, double aux_scale, float* probability_grad) {
  const int64_t experts = routing.experts;
  const int64_t k = routing.top_k;
  for (int64_t t = 0; t < routing.tokens; ++t) {
    const float* p = probabilities + t * experts;
    float* dp = probability_grad + t * experts;
    for (int64_t e = 0; e < experts; ++e)
      dp[e] = static_cast<float>(aux_scale * static_cast<double>(experts) *
                                 routing.first_choice_fraction[static_cast<size_t>(e)] /
                                 static_cast<double>(routing.tokens));
    const size_t first = static_cast<size_t>(t * k);
    if (k == 1) {
      dp[routing.expert[first]] += weight_grad[first];
      continue;
    }
    // w_i = p_i / S over the chosen set: dp_j = (dw_j - sum_i dw_i w_i) / S,
    // with w_i the renormalised values (recomputed here: a dropped one's
    // stored weight is 0).
    double chosen_sum = 0;
    for (int64_t c = 0; c < k; ++c) chosen_sum += p[routing.expert[first + static_cast<size_t>(c)]];
    double weighted = 0;
    for (int64_t c = 0; c < k; ++c) {
      const size_t a = first + static_cast<size_t>(c);
      weighted += static_cast<double>(weight_grad[a]) * p[routing.expert[a]] / chosen_sum;
    }
    for (int64_t c = 0; c < k; ++c) {
      const size_t a = first + static_cast<size_t>(c);
      dp[routing.expert[a]] += static_cast<float>((weight_grad[a] - weighted) / chosen_sum);
    }
  }
}

void softmax_rows(float* values, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = values + r * cols;
    const float top = *std::max_element(row, row + cols);
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) {
      row[c] = std::exp(row[c] - top);
      sum += row[c];
    }
    for (int64_t c = 0; c < cols; ++c) row[c] = static_cast<float>(row[c] / sum);
  }
}

void softmax_rows_backward(const float* probabilities, float* grad, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = probabilities + r * cols;
    float* g = grad + r * cols;
    double dot = 0;
    for (int64_t c = 0; c < cols; ++c) dot += static_cast<double>(p[c]) * g[c];
    for (int64_t c = 0; c < cols; ++c) g[c] = static_cast<float>(p[c] * (g[c] - dot));
  }
}

}  // namespace pipelab
