#include "core/data/split.h"

#include <cassert>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/data/random.h"

namespace pipelab {

namespace {

constexpr uint64_t kShuffleStream = 201;  // see random.h: keeps shuffles apart from generators

Dataset sample_range(const Dataset& dataset, int64_t begin, int64_t end) {
  std::vector<int64_t> indices(static_cast<size_t>(end - begin));
  std::iota(indices.begin(), indices.end(), begin);
  return select_samples(dataset, indices);
}

}  // namespace

Dataset shuffle_samples(const Dataset& dataset, uint64_t seed) {
  Rng rng(seed, kShuffleStream);
  return select_samples(dataset, random_permutation(dataset.samples, rng));
}

Dataset first_samples(const Dataset& dataset, int64_t count) {
  assert(count >= 0);
  if (count >= dataset.samples) return dataset;
  return sample_range(dataset, 0, count);
}

void check_validation_fraction(double validation_fraction) {
  if (!(validation_fraction >= 0.0 && validation_fraction < 1.0)) {
    throw DataError("data.validation_fraction is " + std::to_string(validation_fraction) +
                    "; use a value in [0, 1), e.g. 0.2 to hold out a fifth of the samples");
  }
}

int64_t validation_count(int64_t samples, double validation_fraction) {
  return std::llround(static_cast<double>(samples) * validation_fraction);
}

DataSplit split_by_fraction(const Dataset& dataset, double validation_fraction) {
  check_validation_fraction(validation_fraction);
  const int64_t held_out = validation_count(dataset.samples, validation_fraction);
  const int64_t training = dataset.samples - held_out;
  if (training < 1) {
    throw DataError(dataset.name + ": data.validation_fraction " +
                    std::to_string(validation_fraction) + " leaves no training sample out of " +
                    std::to_string(dataset.samples) + "; lower it or use more samples");
  }
  DataSplit split;
  split.train = sample_range(dataset, 0, training);
  split.validation = sample_range(dataset, training, dataset.samples);
  split.train.name = dataset.name + " train";
  split.validation.name = dataset.name + " validation";
  return split;
}

}  // namespace pipelab
