// Helpers shared by the nn tests: seeded random tensors and a central-difference
// gradient check.
#pragma once

#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/nn/all_reduce.h"
#include "core/nn/layer.h"
#include "core/nn/tensor.h"

namespace pipelab::testing {

// Values uniform in [low, high), reproducible from `seed`.
inline Tensor random_tensor(int64_t rows, int64_t cols, uint32_t seed, float low = -1.0f,
                            float high = 1.0f, DeviceAllocator* allocator = nullptr,
                            MemoryCategory category = MemoryCategory::Workspace) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> uniform(low, high);
  Tensor t(rows, cols, allocator, category);
  for (int64_t i = 0; i < t.size(); ++i) t.data()[i] = uniform(engine);
  return t;
}

// Like random_tensor, but every value is at least `margin` away from 0 (so a
// finite difference never straddles relu's kink).
inline Tensor random_tensor_away_from_zero(int64_t rows, int64_t cols, uint32_t seed,
                                           float margin = 0.1f) {
  Tensor t = random_tensor(rows, cols, seed);
  for (int64_t i = 0; i < t.size(); ++i) {
    float& v = t.data()[i];
    if (std::fabs(v) < margin) v = v < 0 ? v - margin : v + margin;
  }
  return t;
}

// sum_ij y_ij * w_ij in double: a scalar loss whose gradient with respect to y is w.
inline double weighted_sum(const Tensor& y, const Tensor& w) {
  EXPECT_TRUE(y.same_shape(w));
  double sum = 0;
  for (int64_t i = 0; i < y.size(); ++i) sum += static_cast<double>(y.data()[i]) * w.data()[i];
  return sum;
}

// Checks `analytic` (same shape as `variable`) against central differences of
// loss() with respect to each element of `variable`, which it perturbs in place
// and restores.
inline void expect_gradient_matches(Tensor& variable, const std::function<double()>& loss,
                                    const Tensor& analytic, const std::string& what,
                                    double step = 1e-2, double absolute_tolerance = 2e-3,
                                    double relative_tolerance = 1e-2) {
  ASSERT_TRUE(variable.same_shape(analytic)) << what;
  for (int64_t i = 0; i < variable.size(); ++i) {
    float& v = variable.data()[i];
    const float original = v;
    v = static_cast<float>(original + step);
    const double plus = loss();
    v = static_cast<float>(original - step);
    const double minus = loss();
    v = original;
    const double numeric = (plus - minus) / (2 * step);
    const double expected = analytic.data()[i];
    EXPECT_NEAR(expected, numeric, absolute_tolerance + relative_tolerance * std::fabs(numeric))
        << what << " element " << i;
  }
}

// Largest |a - b| over two tensors of the same shape.
inline double max_abs_difference(const Tensor& a, const Tensor& b) {
  EXPECT_TRUE(a.same_shape(b));
  double worst = 0;
  for (int64_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, static_cast<double>(std::fabs(a.data()[i] - b.data()[i])));
  return worst;
}

inline bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (!a.same_shape(b)) return false;
  for (int64_t i = 0; i < a.size(); ++i)
    if (a.data()[i] != b.data()[i]) return false;
  return true;
}

// An all-reduce (sum) over `tp` threads: each call waits for every shard's
// buffer, sums them in shard order (so every shard gets the same bits), then
// writes its own buffer.
class HostAllReduce {
 public:
  explicit HostAllReduce(int tp) : buffers_(tp), barrier_(tp) {}
  void operator()(int shard, float* data, int64_t count) {
    buffers_[shard] = data;
    barrier_.arrive_and_wait();
    std::vector<float> sum(count, 0.0f);
    for (float* buffer : buffers_)
      for (int64_t i = 0; i < count; ++i) sum[i] += buffer[i];
    barrier_.arrive_and_wait();  // every shard has read every buffer
    std::copy(sum.begin(), sum.end(), data);
  }

 private:
  std::vector<float*> buffers_;
  std::barrier<> barrier_;
};

// Sequence parallelism's collectives over `tp` lockstep threads, on the host:
// each call waits for every shard's buffer, then writes the caller's slice
// (reduce-scatter: the sum of every buffer's slice, in shard order) or every
// slice (all-gather: each from its own shard's buffer).
class HostSequenceCollectives {
 public:
  explicit HostSequenceCollectives(int tp) : buffers_(tp), barrier_(tp) {}
  SequenceCollectives for_shard(int shard) {
    return {[this, shard](float* data, int64_t count) { run(shard, data, count, true); },
            [this, shard](float* data, int64_t count) { run(shard, data, count, false); }};
  }
  // The same over context-parallel ranks: the all-gather then hands every
  // slice over in a ring's order (the rank's own first, then r - 1, ...).
  ContextCollectives for_rank(int rank) {
    const int cp = static_cast<int>(buffers_.size());
    return {[this, rank, cp](float* data, int64_t count, const SliceArrival& arrived) {
              run(rank, data, count, true);
              if (arrived)
                for (int k = 0; k < cp; ++k) arrived((rank - k + cp) % cp);
            },
            [this, rank](float* data, int64_t count) { run(rank, data, count, false); }};
  }

 private:
  void run(int shard, float* data, int64_t count, bool gather) {
    const int tp = static_cast<int>(buffers_.size());
    const int64_t slice = count / tp;
    buffers_[shard] = data;
    barrier_.arrive_and_wait();
    std::vector<float> result(count, 0.0f);
    for (int k = 0; k < tp; ++k)
      for (int64_t i = 0; i < slice; ++i) {
        if (gather) result[k * slice + i] = buffers_[k][k * slice + i];
        else result[shard * slice + i] += buffers_[k][shard * slice + i];
      }
    barrier_.arrive_and_wait();  // every shard has read every buffer
    if (gather) std::copy(result.begin(), result.end(), data);
    else std::copy(result.begin() + shard * slice, result.begin() + (shard + 1) * slice, data + shard * slice);
  }

  std::vector<float*> buffers_;
  std::barrier<> barrier_;
};

// Positions [first, first + count) of every sample of a [batch * seq, width] tensor.
inline Tensor positions_of(const Tensor& whole, int64_t batch, int64_t seq, int64_t first, int64_t count) {
  Tensor part(batch * count, whole.cols());
  for (int64_t b = 0; b < batch; ++b)
    std::copy(whole.row(b * seq + first), whole.row(b * seq + first + count), part.row(b * count));
  return part;
}

// Shard k of tp's positions of every sample of a [batch, seq * dim] tensor,
// [batch, seq / tp * dim], as sequence parallelism splits it.
inline Tensor shard_positions(const Tensor& whole, int64_t seq, int64_t dim, int tp, int k) {
  const int64_t batch = whole.rows();
  const int64_t local = seq / tp;
  Tensor part = positions_of(Tensor::view(whole, batch * seq, dim), batch, seq, k * local, local);
  part.reshape(batch, local * dim);
  return part;
}

// Every element of `actual` within 1e-5 (relative, plus 1e-5) of `expected`.
inline void expect_close(const Tensor& actual, const Tensor& expected, const std::string& what) {
  ASSERT_TRUE(actual.same_shape(expected)) << what;
  for (int64_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual.data()[i], expected.data()[i], 1e-5 * (1 + std::fabs(expected.data()[i])))
        << what << " element " << i;
}

// One training micro-batch of `layer` on x and dy, its gradients zeroed
// first: forward keeping its state, then BI and BW.
inline void run_forward_backward(Layer& layer, const Tensor& x, const Tensor& dy, Tensor& y,
                                 Tensor& dx) {
  layer.zero_grad();
  std::unique_ptr<LayerState> state;
  y = layer.forward_keeping(x, ForwardInfo{}, state);
  dx = layer.backward_input_with(x, dy, ForwardInfo{}, state.get());
  layer.backward_weight_with(x, dy, state.get());
}

// Runs tp sequence-parallel shards of a layer in lockstep threads: each
// shard's layer (layers[k]) is connected to host gathers and scatters, then
// shard k runs run(k) ({x, dy} slices: see shard_positions).
inline void run_sequence_shards(const std::vector<Layer*>& layers,
                                const std::function<void(int)>& run) {
  const int tp = static_cast<int>(layers.size());
  HostSequenceCollectives collectives(tp);
  std::vector<std::thread> threads;
  for (int k = 0; k < tp; ++k) {
    const SequenceCollectives mine = collectives.for_shard(k);
    layers[k]->connect_sequence_parallel(
        {[mine](Tensor& values, bool) { mine.all_gather(values.data(), values.size()); },
         [mine](Tensor& values, bool) { mine.reduce_scatter(values.data(), values.size()); }});
    threads.emplace_back([&run, k] { run(k); });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace pipelab::testing
