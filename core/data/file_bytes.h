// Reading a whole file into memory, gunzipping it on the way when it starts
// with the gzip magic bytes (1f 8b), whatever its name says.
#pragma once

#include <cstdint>
#include <istream>
#include <span>
#include <string>
#include <vector>

namespace pipelab {

// The most bytes a data file may hold, on disk or once decompressed. The
// largest public IDX file (EMNIST) is 0.7 GB; past this a file does not fit
// the CPU backend's memory on the machines PipeLab targets, and a small gzip
// file that expands past it is a decompression bomb, not a data set.
inline constexpr uint64_t kMaxDataFileBytes = uint64_t{4} << 30;  // 4 GiB

// The file's bytes, decompressed when it is gzip. Throws DataError naming the
// file when it is missing, a folder or not a regular file, unreadable, larger
// than kMaxDataFileBytes, changed size while it was read, or a corrupted or
// truncated gzip stream. Concatenated gzip members are read one after the other.
std::vector<uint8_t> read_file_bytes(const std::string& path);

// Reads exactly `expected_size` bytes (the size the file had when it was
// opened) and checks that nothing follows: a file that shrinks or grows while
// it is read, such as a download still running, would otherwise give a
// half-written data set. `name` is used in error messages only.
std::vector<uint8_t> read_stream_bytes(std::istream& stream, uint64_t expected_size,
                                       const std::string& name);

// `bytes` gunzipped when they start with the gzip magic, else unchanged.
std::vector<uint8_t> decompress_if_gzip(std::vector<uint8_t> bytes, const std::string& name);

// True when `bytes` start with the gzip magic 1f 8b.
bool is_gzip(std::span<const uint8_t> bytes);

// Decompresses a gzip stream. `name` is used in error messages only. Throws
// DataError when the output would pass `max_output` bytes.
std::vector<uint8_t> gunzip(std::span<const uint8_t> compressed, const std::string& name,
                            uint64_t max_output = kMaxDataFileBytes);

}  // namespace pipelab
