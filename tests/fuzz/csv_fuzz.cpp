// Fuzz target: a CSV data file, raw or gzip. Byte 0 picks the label column
// (-4..3, negative counting from the end); the rest is the file.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/data/csv_reader.h"
#include "core/data/dataset.h"
#include "core/data/file_bytes.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pipelab;
  if (size < 1) return 0;
  CsvOptions options;
  options.label_column = static_cast<int>(data[0] % 8) - 4;
  try {
    const Dataset dataset = parse_csv_dataset(
        decompress_if_gzip({data + 1, data + size}, "data.csv"), "data.csv", options);
    if (!has_consistent_shape(dataset)) __builtin_trap();
    // NaN and infinity never reach training: the reader refuses them.
    for (float value : dataset.x)
      if (!std::isfinite(value)) __builtin_trap();
  } catch (const DataError& error) {
    fuzz::require_safe_message(error.what());
  }
  return 0;
}
