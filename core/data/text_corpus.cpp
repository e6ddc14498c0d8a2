#include "core/data/text_corpus.h"

#include <cstdio>
#include <string_view>
#include <vector>

#include "core/data/file_bytes.h"
#include "core/text/quoted_excerpt.h"
#include "core/text/utf8.h"

namespace pipelab {

namespace {

constexpr char32_t kCodePoints = 0x110000;  // U+0000..U+10FFFF

std::string characters_text(int64_t count) {
  return std::to_string(count) + (count == 1 ? " character" : " characters");
}

void check_options(const TextCorpusOptions& options) {
  if (options.sequence_length < 1) {
    throw DataError("text: data.sequence_length is " + std::to_string(options.sequence_length) +
                    "; use at least 1 character per sample");
  }
  if (options.sequence_length > kMaxTextCharacters) {
    throw DataError("text: data.sequence_length is " + std::to_string(options.sequence_length) +
                    "; use at most " + std::to_string(kMaxTextCharacters));
  }
  if (options.stride < 0 || options.stride > options.sequence_length) {
    throw DataError("text: data.stride is " + std::to_string(options.stride) + "; use 1.." +
                    std::to_string(options.sequence_length) +
                    " (data.sequence_length; more would skip characters), or 0 for " +
                    std::to_string(options.sequence_length));
  }
  check_validation_fraction(options.validation_fraction);
}

// The code point of the well-formed sequence of `length` bytes at text[at].
char32_t decode_utf8(std::string_view text, size_t at, size_t length) {
  const auto byte = [&](size_t i) {
    return static_cast<char32_t>(static_cast<uint8_t>(text[at + i]));
  };
  if (length == 1) return byte(0);
  static constexpr char32_t kLeadMask[] = {0, 0, 0x1F, 0x0F, 0x07};
  char32_t code = byte(0) & kLeadMask[length];
  for (size_t i = 1; i < length; ++i) code = (code << 6) | (byte(i) & 0x3F);
  return code;
}

std::string encode_utf8(char32_t code) {
  std::string out;
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
  return out;
}

// The file's characters, after checking every byte is well-formed UTF-8. A
// first pass only counts, so a huge file is refused before its code points take
// four bytes each.
std::vector<char32_t> decode_text(std::span<const uint8_t> bytes, const std::string& path) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const size_t start = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;  // a byte order mark
  int64_t count = 0;
  for (size_t at = start; at < text.size(); ++count) {
    const size_t length = utf8_sequence_length(text, at);
    if (length == 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(bytes[at]));
      throw DataError(path_excerpt(path) + ": not valid UTF-8 at byte " + std::to_string(at) +
                      " (" + hex + "); a text source must be UTF-8: convert the file to UTF-8");
    }
    at += length;
  }
  if (count > kMaxTextCharacters) {
    throw DataError(path_excerpt(path) + ": holds " + characters_text(count) + ", more than the " +
                    std::to_string(kMaxTextCharacters) +
                    " PipeLab reads as text; use a shorter text");
  }
  std::vector<char32_t> characters;
  characters.reserve(static_cast<size_t>(count));
  for (size_t at = start; at < text.size();) {
    const size_t length = utf8_sequence_length(text, at);
    characters.push_back(decode_utf8(text, at, length));
    at += length;
  }
  return characters;
}

// Windows of sequence_length + 1 characters starting every `stride` in [begin, end).
int64_t window_count(int64_t begin, int64_t end, int64_t length, int64_t stride) {
  if (end - begin < length + 1) return 0;
  return (end - begin - (length + 1)) / stride + 1;
}

// A sequence set of the windows in [begin, end) of `ids`.
Dataset cut_windows(const std::vector<int32_t>& ids, int64_t begin, int64_t end, int64_t length,
                    int64_t stride, const Dataset& shape) {
  Dataset dataset = shape;
  dataset.samples = window_count(begin, end, length, stride);
  const auto tokens = static_cast<size_t>(dataset.samples * length);
  dataset.x.reserve(tokens);
  dataset.token_labels.reserve(tokens);
  dataset.loss_mask.assign(tokens, 1);
  for (int64_t sample = 0; sample < dataset.samples; ++sample) {
    const int64_t first = begin + sample * stride;
    for (int64_t i = 0; i < length; ++i) {
      dataset.x.push_back(static_cast<float>(ids[static_cast<size_t>(first + i)]));
      dataset.token_labels.push_back(ids[static_cast<size_t>(first + i + 1)]);
    }
  }
  return dataset;
}

}  // namespace

DataSplit parse_text_corpus(std::span<const uint8_t> bytes, const std::string& path,
                            const TextCorpusOptions& options) {
  check_options(options);
  const std::string shown = path_excerpt(path);
  const int64_t length = options.sequence_length;
  const int64_t stride = options.stride == 0 ? length : options.stride;
  const std::string window = std::to_string(length + 1) + " (data.sequence_length " +
                             std::to_string(length) + " + 1 for the last label)";

  const std::vector<char32_t> characters = decode_text(bytes, path);
  const auto count = static_cast<int64_t>(characters.size());
  if (count == 0) {
    throw DataError(shown + ": is empty; a text source needs at least " + window +
                    " characters of UTF-8 text");
  }
  if (count < length + 1) {
    throw DataError(shown + ": holds " + characters_text(count) + "; one sample needs " + window +
                    "; use a longer text or lower data.sequence_length");
  }
  const int64_t held_out = validation_count(count, options.validation_fraction);
  const int64_t boundary = count - held_out;
  if (boundary < length + 1) {
    throw DataError(shown + ": its training part (the first " + characters_text(boundary) +
                    ") is shorter than one sample of " + window +
                    "; lower data.validation_fraction or data.sequence_length");
  }
  if (held_out > 0 && held_out < length + 1) {
    throw DataError(shown + ": its validation part (the last " + characters_text(held_out) +
                    ") is shorter than one sample of " + window +
                    "; raise data.validation_fraction, lower data.sequence_length, or use 0 "
                    "for no validation");
  }
  const int64_t windows =
      window_count(0, boundary, length, stride) + window_count(boundary, count, length, stride);
  if (windows > kMaxSequenceTokens / length) {
    throw DataError(shown + ": makes " + std::to_string(windows) + " samples of " +
                    std::to_string(length) + " tokens, more than the " +
                    std::to_string(kMaxSequenceTokens) +
                    " tokens a sequence set holds; raise data.stride or use a shorter text");
  }

  // The vocabulary: a flag per code point gives the sorted distinct ones in
  // one pass, and a table from code point to id encodes the text in another.
  std::vector<int32_t> id_of(kCodePoints, -1);
  for (char32_t code : characters) id_of[code] = 0;
  Dataset shape;
  shape.name = "text";
  shape.features = length;
  for (char32_t code = 0; code < kCodePoints; ++code) {
    if (id_of[code] < 0) continue;
    id_of[code] = shape.vocab++;
    shape.token_text.push_back(encode_utf8(code));
  }
  std::vector<int32_t> ids;
  ids.reserve(characters.size());
  for (char32_t code : characters) ids.push_back(id_of[code]);

  DataSplit split;
  split.train = cut_windows(ids, 0, boundary, length, stride, shape);
  split.validation = cut_windows(ids, boundary, count, length, stride, shape);
  split.train.name = "text train";
  split.validation.name = "text validation";
  return split;
}

DataSplit load_text_corpus(const std::string& path, const TextCorpusOptions& options) {
  check_options(options);  // before reading, so a bad option is reported without the file
  if (path.empty()) {
    throw DataError(
        "text: data.path is empty; name a UTF-8 text file, such as the LICENSE file "
        "at the top of the PipeLab sources");
  }
  return parse_text_corpus(read_file_bytes(path), path, options);
}

}  // namespace pipelab
