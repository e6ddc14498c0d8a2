// Fuzz target: the file names in a data folder, one per line, paired into IDX
// images and labels files as the mnist, fashion-mnist and idx sources pair them.
// Byte 0 picks the data set name (bit 0: mnist or idx).
#include <cstddef>
#include <cstdint>

#include "core/data/dataset.h"
#include "core/data/idx_folder.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pipelab;
  if (size < 1) return 0;
  const char* dataset_name = (data[0] & 1) ? "mnist" : "idx";
  try {
    const IdxFolder folder =
        pair_idx_files("data", fuzz::split_lines(fuzz::as_text(data + 1, size - 1)), dataset_name);
    if (!folder.train) __builtin_trap();  // a result always has a training pair
  } catch (const DataError& error) {
    fuzz::require_safe_message(error.what());
  }
  return 0;
}
