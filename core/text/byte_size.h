// Byte sizes as people write them: "16GiB", "80 GB", "512MiB", "1073741824".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace pipelab {

// A non-negative number with an optional unit: B, KB, MB, GB, TB (powers of
// 1000) or KiB, MiB, GiB, TiB (powers of 1024), case-insensitive, spaces
// allowed before the unit. Empty for anything else or above 2^62 bytes.
std::optional<int64_t> parse_byte_size(const std::string& text);

// "512 B", "1.50 KiB", "40.13 GiB": the largest binary unit below the size,
// two decimals rounded up so the figure always suffices.
std::string byte_size_text(int64_t bytes);

}  // namespace pipelab
