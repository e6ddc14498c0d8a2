// Plain values in and out of a byte buffer, for messages between the
// processes of one run (report_batch.h, core/mpi). Every process runs the same
// build, so a trivially copyable value travels as its bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace pipelab {

template <typename T>
void append_bytes(std::vector<char>& buffer, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  const char* bytes = reinterpret_cast<const char*>(&value);
  buffer.insert(buffer.end(), bytes, bytes + sizeof(T));
}

// A count, then each value.
template <typename T>
void append_all(std::vector<char>& buffer, const std::vector<T>& values) {
  append_bytes(buffer, static_cast<uint64_t>(values.size()));
  for (const T& value : values) append_bytes(buffer, value);
}

// Reads a buffer front to back; a read past its end is a malformed message
// (std::runtime_error).
class ByteReader {
 public:
  ByteReader(const char* data, size_t size) : data_(data), size_(size) {}

  template <typename T>
  T read() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return value;
  }
  // The next `count` bytes, in place.
  const char* take(size_t count) {
    if (count > size_ - offset_)
      throw std::runtime_error("malformed message (cut short)");
    const char* at = data_ + offset_;
    offset_ += count;
    return at;
  }
  // What append_all wrote, added to `values`.
  template <typename T>
  void read_all(std::vector<T>& values) {
    const auto count = read<uint64_t>();
    for (uint64_t i = 0; i < count; ++i) values.push_back(read<T>());
  }
  bool done() const { return offset_ == size_; }

 private:
  const char* data_;
  size_t size_;
  size_t offset_ = 0;
};

}  // namespace pipelab
