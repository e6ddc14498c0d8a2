// Dataset: samples held in memory as plain row-major arrays, ready to be cut
// into batches. DataError is the one error type core/data throws for problems
// a user can cause (bad files, bad parameters).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipelab {

// One line naming the file or field and what is wrong, e.g.
// "t10k-labels-idx1-ubyte.gz: truncated: header says 10000 labels but the file holds 9998".
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Dataset {
  int64_t samples = 0;
  int64_t features = 0;         // input width per sample
  int classes = 0;              // classification: labels are 0..classes-1; 0 = regression
  std::vector<float> x;         // samples x features, row-major
  std::vector<int32_t> labels;  // classification: one per sample (empty for regression)
  std::vector<float> targets;   // regression: samples x target_width, row-major
  int64_t target_width = 0;     // regression: values per sample (0 for classification)
  std::string name;             // for titles and messages, e.g. "spiral" or "mnist train"

  bool is_classification() const { return classes > 0; }
  const float* row(int64_t sample) const { return x.data() + sample * features; }
};

// True when the arrays' sizes agree with samples/features/classes/target_width.
bool has_consistent_shape(const Dataset& dataset);

// The samples at `indices`, in that order (indices may repeat).
Dataset select_samples(const Dataset& dataset, std::span<const int64_t> indices);

// How many samples carry each label (size `classes`; empty for regression).
std::vector<int64_t> count_per_class(const Dataset& dataset);

}  // namespace pipelab
