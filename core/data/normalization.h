// Standardising inputs to mean 0 and deviation 1 with statistics taken from
// the training split only, then applied unchanged to the validation split, so
// validation measures what a model would see on new data.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/data/dataset.h"

namespace pipelab {

enum class Normalization {
  None,        // inputs as loaded
  Global,      // one mean and deviation over every input value (images)
  PerFeature,  // a mean and deviation per column (tabular data)
};

const char* normalization_name(Normalization normalization);  // none, global, per-feature
std::optional<Normalization> parse_normalization(const std::string& name);

// What was subtracted and divided: one value each for Global, one per feature
// for PerFeature, empty for None. A deviation below 1e-6 (a constant input,
// like MNIST's border pixels) is stored as 1 so the input is only centred.
struct NormalizationStats {
  Normalization mode = Normalization::None;
  std::vector<float> mean;
  std::vector<float> deviation;
};

// Statistics of `train`'s inputs (population deviation, summed in double).
// A sequence set's inputs are token ids, names rather than quantities: its
// statistics are always mode None, whatever `mode` asks for.
NormalizationStats fit_normalization(const Dataset& train, Normalization mode);

// x = (x - mean) / deviation, in place. Leaves a sequence set unchanged, so a
// scaled token id can never reach an embedding lookup.
void apply_normalization(const NormalizationStats& stats, Dataset& dataset);

}  // namespace pipelab
