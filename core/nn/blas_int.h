// cblas takes int sizes; the widths and batches of this lab are far below
// INT_MAX, which debug builds check.
#pragma once

#include <cassert>
#include <climits>
#include <cstdint>

namespace pipelab {

inline int blas_int(int64_t value) {
  assert(value >= 0 && value <= INT_MAX);
  return static_cast<int>(value);
}

}  // namespace pipelab
