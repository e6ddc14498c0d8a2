#include "core/data/normalization.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace pipelab {

namespace {

constexpr double kMinDeviation = 1e-6;

float usable_deviation(double variance) {
  const double deviation = std::sqrt(std::max(variance, 0.0));
  return deviation < kMinDeviation ? 1.0f : static_cast<float>(deviation);
}

}  // namespace

const char* normalization_name(Normalization normalization) {
  switch (normalization) {
    case Normalization::None:
      return "none";
    case Normalization::Global:
      return "global";
    case Normalization::PerFeature:
      return "per-feature";
  }
  return "none";
}

std::optional<Normalization> parse_normalization(const std::string& name) {
  for (Normalization mode :
       {Normalization::None, Normalization::Global, Normalization::PerFeature}) {
    if (name == normalization_name(mode)) return mode;
  }
  return std::nullopt;
}

NormalizationStats fit_normalization(const Dataset& train, Normalization mode) {
  assert(has_consistent_shape(train));
  NormalizationStats stats;
  stats.mode = mode;
  if (mode == Normalization::None || train.samples == 0 || train.is_sequence()) {
    stats.mode = Normalization::None;
    return stats;
  }
  // Two passes (mean, then squared distances from it) stay accurate when the
  // mean is large compared with the spread.
  const bool global = mode == Normalization::Global;
  const size_t groups = global ? 1 : static_cast<size_t>(train.features);
  const auto group_of = [global](int64_t feature) {
    return global ? size_t{0} : static_cast<size_t>(feature);
  };
  const double values_per_group =
      static_cast<double>(train.samples) * static_cast<double>(global ? train.features : 1);
  std::vector<double> mean(groups, 0.0);
  for (int64_t i = 0; i < train.samples; ++i) {
    const float* row = train.row(i);
    for (int64_t f = 0; f < train.features; ++f) mean[group_of(f)] += row[f];
  }
  for (double& value : mean) value /= values_per_group;
  std::vector<double> variance(groups, 0.0);
  for (int64_t i = 0; i < train.samples; ++i) {
    const float* row = train.row(i);
    for (int64_t f = 0; f < train.features; ++f) {
      const double distance = row[f] - mean[group_of(f)];
      variance[group_of(f)] += distance * distance;
    }
  }
  for (size_t g = 0; g < groups; ++g) {
    stats.mean.push_back(static_cast<float>(mean[g]));
    stats.deviation.push_back(usable_deviation(variance[g] / values_per_group));
  }
  return stats;
}

void apply_normalization(const NormalizationStats& stats, Dataset& dataset) {
  if (stats.mode == Normalization::None || dataset.is_sequence()) return;
  const bool global = stats.mode == Normalization::Global;
  assert(global ? stats.mean.size() == 1
                : static_cast<int64_t>(stats.mean.size()) == dataset.features);
  for (int64_t i = 0; i < dataset.samples; ++i) {
    float* row = dataset.x.data() + i * dataset.features;
    for (int64_t f = 0; f < dataset.features; ++f) {
      const size_t group = global ? 0 : static_cast<size_t>(f);
      row[f] = (row[f] - stats.mean[group]) / stats.deviation[group];
    }
  }
}

}  // namespace pipelab
