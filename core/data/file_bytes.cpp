#include "core/data/file_bytes.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>

#include "core/data/dataset.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {

namespace {

constexpr size_t kChunkBytes = 64 * 1024;

// Ends the zlib stream however decompression leaves the function.
struct InflateStream {
  z_stream stream{};
  ~InflateStream() { inflateEnd(&stream); }
};

std::string gibibytes_text(uint64_t bytes) { return std::to_string(bytes >> 30) + " GiB"; }

}  // namespace

bool is_gzip(std::span<const uint8_t> bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

std::vector<uint8_t> gunzip(std::span<const uint8_t> compressed, const std::string& name,
                            uint64_t max_output) {
  const std::string shown = path_excerpt(name);
  InflateStream zs;
  constexpr int kGzipWindowBits = 15 + 16;  // 32 KiB window, gzip wrapper only
  if (inflateInit2(&zs.stream, kGzipWindowBits) != Z_OK) {
    throw DataError(shown + ": cannot start gzip decompression (zlib out of memory)");
  }
  // Grows by doubling, but never far past max_output: a bomb is refused before
  // it takes the memory.
  const uint64_t largest_buffer = max_output + kChunkBytes;
  std::vector<uint8_t> output(std::min<uint64_t>(
      std::max<uint64_t>(uint64_t{compressed.size()} * 4, kChunkBytes), largest_buffer));
  size_t consumed = 0;
  size_t produced = 0;
  for (;;) {
    if (produced > max_output) {
      throw DataError(shown + ": decompresses to more than " + gibibytes_text(max_output) +
                      ", more than PipeLab reads from one data file; use a smaller file");
    }
    if (output.size() - produced < kChunkBytes) {
      output.resize(std::min<uint64_t>(uint64_t{output.size()} * 2, largest_buffer));
    }
    const size_t available_in = std::min<size_t>(compressed.size() - consumed, UINT_MAX);
    const size_t available_out = std::min<size_t>(output.size() - produced, UINT_MAX);
    // zlib's API takes non-const input pointers but never writes through them.
    zs.stream.next_in = const_cast<Bytef*>(compressed.data() + consumed);
    zs.stream.avail_in = static_cast<uInt>(available_in);
    zs.stream.next_out = output.data() + produced;
    zs.stream.avail_out = static_cast<uInt>(available_out);
    const int result = inflate(&zs.stream, Z_NO_FLUSH);
    consumed += available_in - zs.stream.avail_in;
    produced += available_out - zs.stream.avail_out;

    if (result == Z_STREAM_END) {
      if (consumed == compressed.size()) break;
      // Another gzip member may follow (as `cat a.gz b.gz` makes); anything else is damage.
      if (!is_gzip(compressed.subspan(consumed))) {
        throw DataError(shown + ": corrupted gzip: " +
                        std::to_string(compressed.size() - consumed) +
                        " unexpected bytes after the compressed data");
      }
      inflateReset(&zs.stream);
      continue;
    }
    if (result == Z_OK) continue;
    if (result == Z_BUF_ERROR && consumed == compressed.size()) {
      throw DataError(shown + ": truncated gzip: the compressed data ends early (" +
                      std::to_string(compressed.size()) + " bytes read)");
    }
    if (result == Z_DATA_ERROR || result == Z_NEED_DICT) {
      const std::string detail = zs.stream.msg ? zs.stream.msg : "invalid data";
      throw DataError(shown + ": corrupted gzip data (" + safe_excerpt(detail) + ")");
    }
    if (result == Z_MEM_ERROR) throw DataError(shown + ": out of memory while decompressing");
    throw DataError(shown + ": gzip decompression failed (zlib error " + std::to_string(result) +
                    ")");
  }
  output.resize(produced);
  return output;
}

std::vector<uint8_t> decompress_if_gzip(std::vector<uint8_t> bytes, const std::string& name) {
  if (is_gzip(bytes)) return gunzip(bytes, name);
  return bytes;
}

std::vector<uint8_t> read_stream_bytes(std::istream& stream, uint64_t expected_size,
                                       const std::string& name) {
  std::vector<uint8_t> bytes(expected_size);
  stream.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  const auto got = static_cast<uint64_t>(stream.gcount());
  if (stream.bad()) throw DataError(path_excerpt(name) + ": read error");
  if (got < expected_size) {
    // The whole text at the throw, so the app's translation test sees its words.
    throw DataError(path_excerpt(name) + ": changed while it was being read: it held " +
                    std::to_string(expected_size) + " bytes when opened but only " +
                    std::to_string(got) +
                    " could be read (is it still being written or downloaded?); try again when "
                    "it is complete");
  }
  if (stream.peek() != std::istream::traits_type::eof()) {
    throw DataError(path_excerpt(name) + ": changed while it was being read: it grew past the " +
                    std::to_string(expected_size) +
                    " bytes it held when opened (is it still being written or downloaded?); try "
                    "again when it is complete");
  }
  return bytes;
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  namespace fs = std::filesystem;
  const std::string shown = path_excerpt(path);
  std::error_code error;
  const auto status = fs::status(path, error);
  if (!fs::exists(status)) throw DataError(shown + ": file not found");
  if (fs::is_directory(status)) throw DataError(shown + ": is a folder, expected a file");
  if (!fs::is_regular_file(status)) {
    throw DataError(shown + ": is not a regular file (a device, pipe or socket); give a data file");
  }
  const uint64_t size = fs::file_size(path, error);
  if (error) throw DataError(shown + ": cannot read its size (" + error.message() + ")");
  if (size > kMaxDataFileBytes) {
    throw DataError(shown + ": holds " + std::to_string(size) + " bytes, more than the " +
                    gibibytes_text(kMaxDataFileBytes) +
                    " PipeLab reads from one data file; use a smaller file");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) throw DataError(shown + ": cannot open the file (check its permissions)");
  return decompress_if_gzip(read_stream_bytes(file, size, path), path);
}

}  // namespace pipelab
