// CSV data sets: one sample per line, cells separated by commas, one column
// holding the class label (a whole number >= 0) and every other column a
// feature. The first row is a header when any of its cells is not a number.
// Blank lines are skipped; cells may be wrapped in double quotes but may not
// contain commas. The file may be gzip-compressed.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/data/dataset.h"

namespace pipelab {

struct CsvOptions {
  int label_column = 0;  // 0-based; negative counts from the end (-1: the last column)
};

// classes = largest label + 1. Features are read as they are (no scaling).
// Throws DataError naming the file, line and column for an empty file, a
// non-numeric or non-finite cell, a label that is negative or not a whole
// number, a row with a different number of cells than the first, or a label
// column outside the rows.
Dataset read_csv_dataset(const std::string& path, const CsvOptions& options = {});

// The same for a file's bytes already in memory (decompressed); `path` names
// it in messages.
Dataset parse_csv_dataset(std::span<const uint8_t> bytes, const std::string& path,
                          const CsvOptions& options = {});

}  // namespace pipelab
