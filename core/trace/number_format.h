// Numbers as text for the exporters: the shortest plain decimal ("0.000012",
// "1500000") that reads back to the same double. Never exponent notation, since
// some trace readers parse only plain decimals; independent of locale and of
// the stream's precision settings.
#pragma once

#include <cstdint>
#include <string>

namespace pipelab {

// Requires a finite value (callers decide what NaN becomes: null in JSON,
// an empty cell in CSV).
std::string format_double(double value);
std::string format_integer(int64_t value);

}  // namespace pipelab
