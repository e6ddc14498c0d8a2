#include "core/data/dataset.h"

#include <algorithm>
#include <cassert>

namespace pipelab {

bool has_consistent_shape(const Dataset& dataset) {
  if (dataset.samples < 0 || dataset.features < 0 || dataset.classes < 0) return false;
  if (static_cast<int64_t>(dataset.x.size()) != dataset.samples * dataset.features) return false;
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
  result.x.reserve(static_cast<size_t>(result.samples * result.features));
  for (int64_t index : indices) {
    assert(index >= 0 && index < dataset.samples);
    const float* row = dataset.row(index);
    result.x.insert(result.x.end(), row, row + dataset.features);
    if (dataset.is_classification()) {
      result.labels.push_back(dataset.labels[static_cast<size_t>(index)]);
    } else {
      const auto begin = dataset.targets.begin() + index * dataset.target_width;
      result.targets.insert(result.targets.end(), begin, begin + dataset.target_width);
    }
  }
  return result;
}

std::vector<int64_t> count_per_class(const Dataset& dataset) {
  std::vector<int64_t> counts(static_cast<size_t>(dataset.classes), 0);
  for (int32_t label : dataset.labels) {
    assert(label >= 0 && label < dataset.classes);
    ++counts[static_cast<size_t>(label)];
  }
  return counts;
}

}  // namespace pipelab
