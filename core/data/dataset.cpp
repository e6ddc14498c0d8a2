#include "core/data/dataset.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace pipelab {

namespace {

bool is_token_id(float value, int vocab) {
  return value >= 0.0f && value < static_cast<float>(vocab) && std::floor(value) == value;
}

bool has_consistent_sequence_shape(const Dataset& dataset) {
  const int64_t tokens = dataset.samples * dataset.features;
  if (dataset.vocab > kMaxTokenIds || dataset.classes != 0 || dataset.target_width != 0 ||
      !dataset.labels.empty() || !dataset.targets.empty()) {
    return false;
  }
  if (static_cast<int64_t>(dataset.token_labels.size()) != tokens ||
      static_cast<int64_t>(dataset.loss_mask.size()) != tokens) {
    return false;
  }
  if (!dataset.token_text.empty() &&
      static_cast<int64_t>(dataset.token_text.size()) != dataset.vocab) {
    return false;
  }
  const int vocab = dataset.vocab;
  return std::all_of(dataset.x.begin(), dataset.x.end(),
                     [&](float value) { return is_token_id(value, vocab); }) &&
         std::all_of(dataset.token_labels.begin(), dataset.token_labels.end(),
                     [&](int32_t label) { return label >= 0 && label < vocab; }) &&
         std::all_of(dataset.loss_mask.begin(), dataset.loss_mask.end(),
                     [](uint8_t counted) { return counted <= 1; });
}

}  // namespace

bool has_consistent_shape(const Dataset& dataset) {
  if (dataset.samples < 0 || dataset.features < 0 || dataset.classes < 0 || dataset.vocab < 0) {
    return false;
  }
  if (static_cast<int64_t>(dataset.x.size()) != dataset.samples * dataset.features) return false;
  if (dataset.is_sequence()) return has_consistent_sequence_shape(dataset);
  if (!dataset.token_labels.empty() || !dataset.loss_mask.empty() || !dataset.token_text.empty()) {
    return false;
  }
  if (dataset.is_classification()) {
    if (static_cast<int64_t>(dataset.labels.size()) != dataset.samples) return false;
    if (!dataset.targets.empty() || dataset.target_width != 0) return false;
    return std::all_of(dataset.labels.begin(), dataset.labels.end(),
                       [&](int32_t label) { return label >= 0 && label < dataset.classes; });
  }
  return dataset.labels.empty() && dataset.target_width > 0 &&
         static_cast<int64_t>(dataset.targets.size()) == dataset.samples * dataset.target_width;
}

Dataset select_samples(const Dataset& dataset, std::span<const int64_t> indices) {
  assert(has_consistent_shape(dataset));
  Dataset result;
  result.samples = static_cast<int64_t>(indices.size());
  result.features = dataset.features;
  result.classes = dataset.classes;
  result.target_width = dataset.target_width;
  result.name = dataset.name;
  result.vocab = dataset.vocab;
  result.token_text = dataset.token_text;
  result.x.reserve(static_cast<size_t>(result.samples * result.features));
  for (int64_t index : indices) {
    assert(index >= 0 && index < dataset.samples);
    const float* row = dataset.row(index);
    result.x.insert(result.x.end(), row, row + dataset.features);
    if (dataset.is_sequence()) {
      const int64_t begin = index * dataset.features;
      result.token_labels.insert(result.token_labels.end(), dataset.token_labels.begin() + begin,
                                 dataset.token_labels.begin() + begin + dataset.features);
      result.loss_mask.insert(result.loss_mask.end(), dataset.loss_mask.begin() + begin,
                              dataset.loss_mask.begin() + begin + dataset.features);
    } else if (dataset.is_classification()) {
      result.labels.push_back(dataset.labels[static_cast<size_t>(index)]);
    } else {
      const auto begin = dataset.targets.begin() + index * dataset.target_width;
      result.targets.insert(result.targets.end(), begin, begin + dataset.target_width);
    }
  }
  return result;
}

std::vector<int64_t> count_per_class(const Dataset& dataset) {
  if (dataset.is_sequence()) {
    std::vector<int64_t> counts(static_cast<size_t>(dataset.vocab), 0);
    for (size_t i = 0; i < dataset.token_labels.size(); ++i) {
      if (dataset.loss_mask[i] != 0) ++counts[static_cast<size_t>(dataset.token_labels[i])];
    }
    return counts;
  }
  std::vector<int64_t> counts(static_cast<size_t>(dataset.classes), 0);
  for (int32_t label : dataset.labels) {
    assert(label >= 0 && label < dataset.classes);
    ++counts[static_cast<size_t>(label)];
  }
  return counts;
}

}  // namespace pipelab
