// Reading a whole file into memory, gunzipping it on the way when it starts
// with the gzip magic bytes (1f 8b), whatever its name says.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pipelab {

// The file's bytes, decompressed when it is gzip. Throws DataError naming the
// file when it is missing, a folder, unreadable, or a corrupted or truncated
// gzip stream. Concatenated gzip members are read one after the other.
std::vector<uint8_t> read_file_bytes(const std::string& path);

// True when `bytes` start with the gzip magic 1f 8b.
bool is_gzip(std::span<const uint8_t> bytes);

// Decompresses a gzip stream. `name` is used in error messages only.
std::vector<uint8_t> gunzip(std::span<const uint8_t> compressed, const std::string& name);

}  // namespace pipelab
