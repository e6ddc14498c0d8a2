// Synthetic token-sequence tasks for GPT-style models (copy, reverse, sort,
// add), generated from a seed like the other synthetic sets: the same options
// give the same tokens on every platform (see random.h). The layouts are
// described in datasets/README.md.
//
// Vocabulary, shared by every task so a model trained on one reads the others:
//   0 '_' padding (after the answer, never counted)
//   1 '|' separator between the question and the answer (copy, reverse, sort)
//   2 '+' and 3 '=' (add)
//   4.. symbols: symbol k is id 4 + k. add uses only the digits 0-9 (ids 4..13).
//
// A sample is cut from sequence_length + 1 tokens t[]: x = t[0..n-1] and
// token_labels = t[1..n] (see Dataset). loss_mask is 1 exactly where the label
// is an answer token, so token accuracy over the mask is the task's accuracy
// with the true answer fed back (teacher forcing).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/data/dataset.h"

namespace pipelab {

inline constexpr int32_t kPadToken = 0;
inline constexpr int32_t kSeparatorToken = 1;
inline constexpr int32_t kPlusToken = 2;
inline constexpr int32_t kEqualsToken = 3;
inline constexpr int32_t kFirstSymbolToken = 4;
inline constexpr int kDecimalDigits = 10;

struct SequenceTaskOptions {
  int64_t samples = 2048;        // how many sequences (before any split)
  int64_t sequence_length = 32;  // tokens per sample: the model's input width
  int vocab = 16;                // token ids 0..vocab-1, the 4 special tokens included
  uint64_t seed = 1;
};

// copy:    s1..sL | s1..sL _..   with L = sequence_length / 2, symbols uniform
// reverse: s1..sL | sL..s1 _..
// sort:    s1..sL | the symbols in ascending order _..
// Each needs sequence_length >= 2 and vocab >= 6 (two symbols at least).
Dataset make_copy_task(const SequenceTaskOptions& options);
Dataset make_reverse_task(const SequenceTaskOptions& options);
Dataset make_sort_task(const SequenceTaskOptions& options);

// add: a0..aD-1 + b0..bD-1 = c0..cD _..  with D = (sequence_length - 2) / 3
// digits per operand, least-significant digit first (so each answer digit
// follows from digits already seen plus a carry, as in written addition),
// every number at full width (leading zeros last); the sum has D + 1 digits.
// Needs sequence_length >= 5 and vocab >= 14 (ids above 13 are not used).
Dataset make_add_task(const SequenceTaskOptions& options);

// Prefix length L of copy, reverse and sort; digits D per operand of add.
int64_t sequence_task_prefix_length(int64_t sequence_length);
int64_t add_task_digits(int64_t sequence_length);

// What each task token stands for: "_", "|", "+", "=", then the symbols
// 0-9, a-z, then #36, #37, ... (the digits are add's digits).
std::vector<std::string> sequence_task_token_text(int vocab);

// copy, reverse, sort, add.
std::vector<std::string> sequence_task_names();
bool is_sequence_task(const std::string& source);

// Dispatches on a name from sequence_task_names(). Throws DataError for an
// unknown name, samples < 1, a vocab too small for the task or above 65536, a
// sequence_length too short for it (naming the minimum), or more tokens in all
// than kMaxSequenceTokens.
Dataset make_sequence_task(const std::string& source, const SequenceTaskOptions& options);

}  // namespace pipelab
