#include "core/data/file_bytes.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>

#include "core/data/dataset.h"

namespace pipelab {

namespace {

// Ends the zlib stream however decompression leaves the function.
struct InflateStream {
  z_stream stream{};
  ~InflateStream() { inflateEnd(&stream); }
};

}  // namespace

bool is_gzip(std::span<const uint8_t> bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

std::vector<uint8_t> gunzip(std::span<const uint8_t> compressed, const std::string& name) {
  InflateStream zs;
  constexpr int kGzipWindowBits = 15 + 16;  // 32 KiB window, gzip wrapper only
  if (inflateInit2(&zs.stream, kGzipWindowBits) != Z_OK) {
    throw DataError(name + ": cannot start gzip decompression (zlib out of memory)");
  }
  std::vector<uint8_t> output(std::max<size_t>(compressed.size() * 4, 64 * 1024));
  size_t consumed = 0;
  size_t produced = 0;
  for (;;) {
    if (output.size() - produced < 64 * 1024) output.resize(output.size() * 2);
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
        throw DataError(name + ": corrupted gzip: " + std::to_string(compressed.size() - consumed) +
                        " unexpected bytes after the compressed data");
      }
      inflateReset(&zs.stream);
      continue;
    }
    if (result == Z_OK) continue;
    if (result == Z_BUF_ERROR && consumed == compressed.size()) {
      throw DataError(name + ": truncated gzip: the compressed data ends early (" +
                      std::to_string(compressed.size()) + " bytes read)");
    }
    if (result == Z_DATA_ERROR || result == Z_NEED_DICT) {
      const std::string detail = zs.stream.msg ? zs.stream.msg : "invalid data";
      throw DataError(name + ": corrupted gzip data (" + detail + ")");
    }
    if (result == Z_MEM_ERROR) throw DataError(name + ": out of memory while decompressing");
    throw DataError(name + ": gzip decompression failed (zlib error " + std::to_string(result) +
                    ")");
  }
  output.resize(produced);
  return output;
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) throw DataError(path + ": file not found");
  if (std::filesystem::is_directory(status)) {
    throw DataError(path + ": is a folder, expected a file");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) throw DataError(path + ": cannot open the file (check its permissions)");
  std::vector<uint8_t> bytes;
  char buffer[64 * 1024];
  while (file.read(buffer, sizeof buffer) || file.gcount() > 0) {
    bytes.insert(bytes.end(), buffer, buffer + file.gcount());
  }
  if (file.bad()) throw DataError(path + ": read error");
  if (is_gzip(bytes)) return gunzip(bytes, path);
  return bytes;
}

}  // namespace pipelab
