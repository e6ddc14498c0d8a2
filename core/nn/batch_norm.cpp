#include "core/nn/batch_norm.h"

#include <cassert>
#include <cmath>
#include <memory>

namespace pipelab {
namespace {

struct BatchNormState : LayerState {
  BatchNormLayer::Statistics statistics;
  int64_t bytes() const override { return 0; }  // a few numbers per channel, not a tensor
};

}  // namespace

bool RunningStatisticsFolds::first_time(const ForwardInfo& info) {
  while (!folded_.empty() && folded_.begin()->first < info.step - 2) folded_.erase(folded_.begin());
  return folded_.insert({info.step, info.first_sample}).second;
}

BatchNormLayer::BatchNormLayer(int index, const ImageShape& image, const BatchNormOptions& options,
                               DeviceAllocator* allocator)
    : Layer(LayerType::BatchNorm, index, image.size(), image.size(), allocator),
      image_(image),
      options_(options),
      gamma_(1, image.channels, allocator, MemoryCategory::Weights),
      beta_(1, image.channels, allocator, MemoryCategory::Weights),
      gamma_grad_(1, image.channels, allocator, MemoryCategory::Gradients),
      beta_grad_(1, image.channels, allocator, MemoryCategory::Gradients),
      running_mean_(1, image.channels, allocator, MemoryCategory::Weights),
      running_var_(1, image.channels, allocator, MemoryCategory::Weights) {
  gamma_.fill(1.0f);
  running_var_.fill(1.0f);
}

BatchNormLayer::Statistics BatchNormLayer::batch_statistics(const Tensor& x) const {
  const int64_t channels = image_.channels;
  const int64_t pixels = image_.pixels();
  // Sums and sums of squares in double, then the count: one vector, so that
  // synchronised batch norm sums them over the replicas in one collective.
  std::vector<double> sums(static_cast<size_t>(2 * channels + 1), 0.0);
  for (int64_t n = 0; n < x.rows(); ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const float* values = x.row(n) + c * pixels;
      double sum = 0, sum_sq = 0;
      for (int64_t p = 0; p < pixels; ++p) {
        sum += values[p];
        sum_sq += static_cast<double>(values[p]) * values[p];
      }
      sums[static_cast<size_t>(c)] += sum;
      sums[static_cast<size_t>(channels + c)] += sum_sq;
    }
  }
  sums.back() = static_cast<double>(x.rows() * pixels);
  if (all_reduce_) all_reduce_(sums);
  Statistics stats;
  stats.count = sums.back();
  stats.mean.resize(static_cast<size_t>(channels));
  stats.inv_std.resize(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const double mean = sums[static_cast<size_t>(c)] / stats.count;
    const double variance = std::max(0.0, sums[static_cast<size_t>(channels + c)] / stats.count - mean * mean);
    stats.mean[static_cast<size_t>(c)] = mean;
    stats.inv_std[static_cast<size_t>(c)] = 1.0 / std::sqrt(variance + options_.eps);
  }
  return stats;
}

void BatchNormLayer::fold_into_running(const Statistics& stats, const ForwardInfo& info) {
  if (!folded_.first_time(info)) return;  // a recompute
  const double m = options_.momentum;
  const double unbiased = stats.count > 1 ? stats.count / (stats.count - 1) : 1.0;
  for (int64_t c = 0; c < image_.channels; ++c) {
    const double inv_std = stats.inv_std[static_cast<size_t>(c)];
    const double variance = 1.0 / (inv_std * inv_std) - options_.eps;
    float& mean = running_mean_.data()[c];
    float& var = running_var_.data()[c];
    mean = static_cast<float>((1 - m) * mean + m * stats.mean[static_cast<size_t>(c)]);
    var = static_cast<float>((1 - m) * var + m * variance * unbiased);
  }
}

BatchNormLayer::Statistics BatchNormLayer::statistics_for(const Tensor& x, LayerState* state) const {
  if (auto* kept = dynamic_cast<BatchNormState*>(state)) return kept->statistics;
  return batch_statistics(x);
}

Tensor BatchNormLayer::forward(const Tensor& x, const ForwardInfo& info) {
  std::unique_ptr<LayerState> unused;
  return forward_keeping(x, info, unused);
}

Tensor BatchNormLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) {
  return backward_input_with(x, dy, info, nullptr);
}

void BatchNormLayer::backward_weight(const Tensor& x, const Tensor& dy) { backward_weight_with(x, dy, nullptr); }

Tensor BatchNormLayer::forward_keeping(const Tensor& x, const ForwardInfo& info, std::unique_ptr<LayerState>& state) {
  assert(x.cols() == image_.size());
  const int64_t channels = image_.channels;
  const int64_t pixels = image_.pixels();
  std::vector<double> mean(static_cast<size_t>(channels));
  std::vector<double> inv_std(static_cast<size_t>(channels));
  if (info.training) {
    auto kept = std::make_unique<BatchNormState>();
    kept->statistics = batch_statistics(x);
    fold_into_running(kept->statistics, info);
    mean = kept->statistics.mean;
    inv_std = kept->statistics.inv_std;
    state = std::move(kept);
  } else {
    for (int64_t c = 0; c < channels; ++c) {
      mean[static_cast<size_t>(c)] = running_mean_.data()[c];
      inv_std[static_cast<size_t>(c)] = 1.0 / std::sqrt(static_cast<double>(running_var_.data()[c]) + options_.eps);
    }
  }
  Tensor y = Tensor::uninitialized(x.rows(), out_features(), allocator(), MemoryCategory::Activations);
  for (int64_t n = 0; n < x.rows(); ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      // y = x * scale + shift, the affine map the normalisation, gamma and beta make together.
      const double scale = inv_std[static_cast<size_t>(c)] * gamma_.data()[c];
      const double shift = beta_.data()[c] - mean[static_cast<size_t>(c)] * scale;
      const float* in = x.row(n) + c * pixels;
      float* out = y.row(n) + c * pixels;
      for (int64_t p = 0; p < pixels; ++p) out[p] = static_cast<float>(in[p] * scale + shift);
    }
  }
  return y;
}

std::pair<std::vector<double>, std::vector<double>> BatchNormLayer::gradient_sums(
    const Tensor& x, const Tensor& dy, const Statistics& stats) const {
  const int64_t channels = image_.channels;
  const int64_t pixels = image_.pixels();
  std::vector<double> sums(static_cast<size_t>(2 * channels), 0.0);
  for (int64_t n = 0; n < x.rows(); ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const double mean = stats.mean[static_cast<size_t>(c)];
      const double inv_std = stats.inv_std[static_cast<size_t>(c)];
      const float* in = x.row(n) + c * pixels;
      const float* g = dy.row(n) + c * pixels;
      double sum_dy = 0, sum_dy_xhat = 0;
      for (int64_t p = 0; p < pixels; ++p) {
        sum_dy += g[p];
        sum_dy_xhat += g[p] * (in[p] - mean) * inv_std;
      }
      sums[static_cast<size_t>(c)] += sum_dy;
      sums[static_cast<size_t>(channels + c)] += sum_dy_xhat;
    }
  }
  return {std::vector<double>(sums.begin(), sums.begin() + channels),
          std::vector<double>(sums.begin() + channels, sums.end())};
}

Tensor BatchNormLayer::backward_input_with(const Tensor& x, const Tensor& dy, const ForwardInfo& info,
                                           LayerState* state) {
  (void)info;
  const int64_t channels = image_.channels;
  const int64_t pixels = image_.pixels();
  const Statistics stats = statistics_for(x, state);
  auto [sum_dy, sum_dy_xhat] = gradient_sums(x, dy, stats);
  if (all_reduce_) {
    std::vector<double> both = sum_dy;
    both.insert(both.end(), sum_dy_xhat.begin(), sum_dy_xhat.end());
    all_reduce_(both);
    sum_dy.assign(both.begin(), both.begin() + channels);
    sum_dy_xhat.assign(both.begin() + channels, both.end());
  }
  Tensor dx = Tensor::uninitialized(x.rows(), in_features(), allocator(), MemoryCategory::Activations);
  for (int64_t n = 0; n < x.rows(); ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const size_t k = static_cast<size_t>(c);
      const double mean = stats.mean[k];
      const double inv_std = stats.inv_std[k];
      const double mean_dy = sum_dy[k] / stats.count;
      const double mean_dy_xhat = sum_dy_xhat[k] / stats.count;
      const double scale = gamma_.data()[c] * inv_std;
      const float* in = x.row(n) + c * pixels;
      const float* g = dy.row(n) + c * pixels;
      float* d = dx.row(n) + c * pixels;
      for (int64_t p = 0; p < pixels; ++p) {
        const double xhat = (in[p] - mean) * inv_std;
        d[p] = static_cast<float>(scale * (g[p] - mean_dy - xhat * mean_dy_xhat));
      }
    }
  }
  return dx;
}

void BatchNormLayer::backward_weight_with(const Tensor& x, const Tensor& dy, LayerState* state) {
  // This replica's share only: data parallelism sums gamma's and beta's
  // gradients over the replicas as it does every weight's.
  const Statistics stats = statistics_for(x, state);
  const auto [sum_dy, sum_dy_xhat] = gradient_sums(x, dy, stats);
  for (int64_t c = 0; c < image_.channels; ++c) {
    gamma_grad_.data()[c] += static_cast<float>(sum_dy_xhat[static_cast<size_t>(c)]);
    beta_grad_.data()[c] += static_cast<float>(sum_dy[static_cast<size_t>(c)]);
  }
}

}  // namespace pipelab
