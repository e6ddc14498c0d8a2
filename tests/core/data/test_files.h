// Helpers for the data tests: a temporary folder that cleans up after itself,
// and writers for the small IDX, gzip and CSV files the tests make.
#pragma once

#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipelab::test {

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("pipelab-data-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("test could not write " + path);
}

inline void write_text(const std::string& path, const std::string& text) {
  write_bytes(path, std::vector<uint8_t>(text.begin(), text.end()));
}

inline std::vector<uint8_t> gzip_bytes(const std::vector<uint8_t>& raw) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  std::vector<uint8_t> out(deflateBound(&zs, static_cast<uLong>(raw.size())) + 64);
  zs.next_in = const_cast<Bytef*>(raw.data());
  zs.avail_in = static_cast<uInt>(raw.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (result != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  return out;
}

inline void append_u32_big_endian(std::vector<uint8_t>& bytes, uint32_t value) {
  bytes.push_back(static_cast<uint8_t>(value >> 24));
  bytes.push_back(static_cast<uint8_t>(value >> 16));
  bytes.push_back(static_cast<uint8_t>(value >> 8));
  bytes.push_back(static_cast<uint8_t>(value));
}

// An IDX images file: magic 0x00000803, then count, rows, cols, then pixels.
inline std::vector<uint8_t> idx_images_bytes(uint32_t count, uint32_t rows, uint32_t cols,
                                             const std::vector<uint8_t>& pixels) {
  std::vector<uint8_t> bytes;
  append_u32_big_endian(bytes, 0x00000803);
  append_u32_big_endian(bytes, count);
  append_u32_big_endian(bytes, rows);
  append_u32_big_endian(bytes, cols);
  bytes.insert(bytes.end(), pixels.begin(), pixels.end());
  return bytes;
}

// An IDX labels file: magic 0x00000801, then count, then one byte per label.
inline std::vector<uint8_t> idx_labels_bytes(uint32_t count, const std::vector<uint8_t>& labels) {
  std::vector<uint8_t> bytes;
  append_u32_big_endian(bytes, 0x00000801);
  append_u32_big_endian(bytes, count);
  bytes.insert(bytes.end(), labels.begin(), labels.end());
  return bytes;
}

// Pixel i of a generated image set: a pattern every test can recompute.
inline uint8_t pattern_pixel(size_t i) { return static_cast<uint8_t>((i * 37 + 11) % 256); }

inline std::vector<uint8_t> pattern_pixels(size_t count) {
  std::vector<uint8_t> pixels(count);
  for (size_t i = 0; i < count; ++i) pixels[i] = pattern_pixel(i);
  return pixels;
}

// The shared MNIST test set, when this checkout has ../shared beside it.
inline std::string shared_mnist_t10k_folder() {
  return std::string(PIPELAB_SHARED_DIR) + "/datasets/mnist-t10k";
}
inline bool have_shared_mnist_t10k() {
  return std::filesystem::exists(shared_mnist_t10k_folder() + "/t10k-images-idx3-ubyte.gz") &&
         std::filesystem::exists(shared_mnist_t10k_folder() + "/t10k-labels-idx1-ubyte.gz");
}

}  // namespace pipelab::test
