// The `text` source: any UTF-8 file as a character-level language-modelling
// set for GPT-style models.
//
// Tokens are Unicode code points, every character as it is in the file (line
// ends included; a leading byte order mark is dropped). The vocabulary is the
// file's distinct code points in ascending order, id 0 the smallest. It is
// built from the whole file, validation part included, so every character the
// validation windows hold has an id: there are no unknown characters (one
// that only the validation part holds is a token the model never saw as a
// target, which validation then rightly counts as hard).
//
// Split by position, not at random, so no window leaks into the other split:
// the last round(characters x validation_fraction) characters validate, the
// rest train, and every window lies wholly inside one part. A window is
// sequence_length + 1 characters c[0..n]; its sample is x = c[0..n-1] and
// token_labels = c[1..n], with loss_mask all ones. Windows start every
// `stride` characters from the start of their part (stride = sequence_length
// by default: consecutive windows share only their boundary character, so
// each character is predicted once); characters left over at a part's end
// that do not fill a window are not used.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/data/dataset.h"
#include "core/data/split.h"

namespace pipelab {

struct TextCorpusOptions {
  int64_t sequence_length = 64;  // characters per sample's input (the model's width)
  int64_t stride = 0;  // characters between window starts, 1..sequence_length; 0: sequence_length
  double validation_fraction = 0.1;  // share of the characters, from the end, that validates
};

// The most characters PipeLab reads as text (it keeps one id per character
// while cutting windows); the same cap as a sequence set's tokens.
inline constexpr int64_t kMaxTextCharacters = int64_t{1} << 28;

// Reads `path` (gzip is decompressed, see file_bytes.h) and cuts it into
// training and validation windows; both splits share vocab and token_text.
// Throws DataError naming the file when it is missing, a folder, unreadable or
// too large, not valid UTF-8 (with the byte offset), empty, too short for one
// sample (with how many characters it has and needs) or for one in each
// split, or when the options are out of range.
DataSplit load_text_corpus(const std::string& path, const TextCorpusOptions& options);

// The same for a file's bytes already in memory; `path` names it in messages.
DataSplit parse_text_corpus(std::span<const uint8_t> bytes, const std::string& path,
                            const TextCorpusOptions& options);

}  // namespace pipelab
