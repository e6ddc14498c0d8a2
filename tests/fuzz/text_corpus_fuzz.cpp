// Fuzz target: a text file read as the `text` source (core/data/text_corpus.h),
// raw or gzip. Byte 0 picks the sequence length (1..8), byte 1 the stride
// (0..sequence length) and the validation fraction; the rest is the file.
// An accepted corpus has the shape it promises: every id inside the
// vocabulary, each id's text one valid UTF-8 character, each label the
// character after its input.
#include <cstddef>
#include <cstdint>

#include "core/data/file_bytes.h"
#include "core/data/text_corpus.h"
#include "core/text/utf8.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

void check_windows(const pipelab::Dataset& dataset, int vocab) {
  using namespace pipelab;
  if (!has_consistent_shape(dataset) || dataset.vocab != vocab) __builtin_trap();
  for (float id : dataset.x)
    if (!(id >= 0 && id < vocab)) __builtin_trap();
  for (int32_t id : dataset.token_labels)
    if (id < 0 || id >= vocab) __builtin_trap();
  // Within a window the label of position i is the input at i + 1.
  const size_t width = static_cast<size_t>(dataset.features);
  for (size_t start = 0; start + width <= dataset.x.size(); start += width)
    for (size_t i = 0; i + 1 < width; ++i)
      if (static_cast<int32_t>(dataset.x[start + i + 1]) != dataset.token_labels[start + i]) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pipelab;
  if (size < 2) return 0;
  TextCorpusOptions options;
  options.sequence_length = 1 + data[0] % 8;
  options.stride = data[1] % (options.sequence_length + 1);
  options.validation_fraction = (data[1] >> 4) / 16.0;
  try {
    const DataSplit split =
        parse_text_corpus(decompress_if_gzip({data + 2, data + size}, "corpus.txt"), "corpus.txt", options);
    const int vocab = split.train.vocab;
    if (vocab < 1 || static_cast<int>(split.train.token_text.size()) != vocab) __builtin_trap();
    for (const std::string& character : split.train.token_text)
      if (character.empty() || !is_valid_utf8(character)) __builtin_trap();
    check_windows(split.train, vocab);
    if (split.validation.samples > 0) check_windows(split.validation, vocab);
  } catch (const DataError& error) {
    fuzz::require_safe_message(error.what());
  }
  return 0;
}
