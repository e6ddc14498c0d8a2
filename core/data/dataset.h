// Dataset: samples held in memory as plain row-major arrays, ready to be cut
// into batches. Three kinds share it: classification (one label per sample),
// regression (a row of targets per sample) and token sequences (a label and a
// loss-mask entry per position, for GPT-style models). DataError is the one
// error type core/data throws for problems a user can cause (bad files, bad
// parameters).
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

// A sequence set (vocab > 0) keeps the shape of the others so splitting,
// shuffling and batching need no second path: a sample is `features` token ids
// stored as floats in x (exact: ids stay below kMaxTokenIds), and its classes
// and target_width are 0 with labels and targets empty. The shift to
// next-token targets is done once, here in the data: if a sample was cut from
// the tokens t[0..features], x holds t[0..features-1] and token_labels holds
// t[1..features], so a model predicts token_labels[i] from x[0..i] and never
// shifts anything itself.
struct Dataset {
  int64_t samples = 0;
  int64_t features = 0;         // input width per sample (sequence sets: tokens per sample)
  int classes = 0;              // classification: labels are 0..classes-1; 0 = regression
  std::vector<float> x;         // samples x features, row-major
  std::vector<int32_t> labels;  // classification: one per sample (empty for regression)
  std::vector<float> targets;   // regression: samples x target_width, row-major
  int64_t target_width = 0;     // regression: values per sample (0 for classification)
  std::string name;             // for titles and messages, e.g. "spiral" or "mnist train"

  // Sequence sets only (all empty or 0 for the other kinds).
  int vocab = 0;                        // token ids are 0..vocab-1; 0: not a sequence set
  std::vector<int32_t> token_labels;    // samples x features: the token after each input token
  std::vector<uint8_t> loss_mask;       // samples x features: 1 = counted in loss and accuracy
  std::vector<std::string> token_text;  // what each id stands for (UTF-8), size vocab or empty

  bool is_classification() const { return classes > 0; }
  bool is_sequence() const { return vocab > 0; }
  int64_t sequence_length() const { return is_sequence() ? features : 0; }
  const float* row(int64_t sample) const { return x.data() + sample * features; }
};

// Token ids are stored as floats in Dataset::x, which hold every whole number
// below 2^24 exactly.
inline constexpr int64_t kMaxTokenIds = int64_t{1} << 24;

// Tokens (samples x features) one sequence set may hold: each takes 9 bytes
// (an input float, a label and a mask byte), so this is about 2.4 GB.
inline constexpr int64_t kMaxSequenceTokens = int64_t{1} << 28;

// True when the arrays' sizes agree with samples/features/classes/target_width
// (sequence sets: with vocab, every id in x and token_labels below it and every
// mask entry 0 or 1), and the fields of the other kinds are empty.
bool has_consistent_shape(const Dataset& dataset);

// The samples at `indices`, in that order (indices may repeat).
Dataset select_samples(const Dataset& dataset, std::span<const int64_t> indices);

// How many samples carry each label (size `classes`; empty for regression).
// Sequence sets: how many counted positions (loss_mask 1) have each token as
// their label (size `vocab`).
std::vector<int64_t> count_per_class(const Dataset& dataset);

}  // namespace pipelab
