// Turning one pool of samples into training and validation sets: a seeded
// shuffle, an optional cap on the sample count, and a split by fraction.
#pragma once

#include <cstdint>

#include "core/data/dataset.h"
#include "core/data/normalization.h"

namespace pipelab {

struct DataSplit {
  Dataset train;
  Dataset validation;                // may be empty (validation_fraction 0)
  NormalizationStats normalization;  // what was applied to both (fitted on train)
};

// The samples in a random order that depends only on `seed`.
Dataset shuffle_samples(const Dataset& dataset, uint64_t seed);

// The first min(count, samples) samples; count >= 0.
Dataset first_samples(const Dataset& dataset, int64_t count);

// Validation samples for a pool: round(samples * fraction).
int64_t validation_count(int64_t samples, double validation_fraction);

// The last validation_count() samples validate, the rest train; shuffle first
// for a random split. Throws DataError when the fraction is outside [0, 1) or
// leaves no training sample.
DataSplit split_by_fraction(const Dataset& dataset, double validation_fraction);

// Throws DataError unless 0 <= fraction < 1.
void check_validation_fraction(double validation_fraction);

}  // namespace pipelab
