// Tensor: a 2-D row-major float32 matrix [rows, cols] (for an MLP: [batch,
// features]) that owns its 64-byte aligned storage. Storage comes from a
// DeviceAllocator, which counts its bytes under the tensor's category until the
// tensor dies; a tensor without an allocator (nullptr) is uncounted, for tests
// and temporaries. Move-only: copies are explicit (clone).
#pragma once

#include <cassert>
#include <cstdint>
#include <vector>

#include "core/nn/device_allocator.h"

namespace pipelab {

class Tensor {
 public:
  Tensor() = default;  // empty: 0 x 0, no storage
  // Zero-filled. Throws std::invalid_argument for negative sizes.
  Tensor(int64_t rows, int64_t cols, DeviceAllocator* allocator = nullptr,
         MemoryCategory category = MemoryCategory::Workspace);
  // Storage left as it comes (Fill::Uninitialized, device_allocator.h), for an
  // output that a kernel overwrites whole before anything reads it.
  static Tensor uninitialized(int64_t rows, int64_t cols, DeviceAllocator* allocator = nullptr,
                              MemoryCategory category = MemoryCategory::Workspace);
  // A tensor holding `values` (rows * cols of them, row-major); for tests and data.
  static Tensor from_values(int64_t rows, int64_t cols, const std::vector<float>& values,
                            DeviceAllocator* allocator = nullptr,
                            MemoryCategory category = MemoryCategory::Workspace);
  ~Tensor() { reset(); }

  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(Tensor&& other) noexcept;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  // A copy on the same allocator, with the same or another category.
  Tensor clone() const { return clone(allocator_, category_); }
  Tensor clone(MemoryCategory category) const { return clone(allocator_, category); }
  // A copy on another allocator (e.g. the receiving device of a send).
  Tensor clone(DeviceAllocator* allocator, MemoryCategory category) const;

  // A read-only view of `source`'s values as [rows, cols] (rows * cols must be
  // its size): no copy, no allocation, and it frees nothing; `source` must
  // outlive it. Lets per-token layers run a [batch, seq * dim] activation as
  // the [batch * seq, dim] matrix the kernels want, both being the same
  // row-major floats. Never write through a view.
  static Tensor view(const Tensor& source, int64_t rows, int64_t cols);
  // A writable view of `count` floats at `data`, owned elsewhere, as [1,
  // count]: hands a kernel's buffer to a function that takes a Tensor (a
  // tensor-parallel collective). It frees nothing; the storage must outlive it.
  static Tensor borrow(float* data, int64_t count);
  // Reinterprets the same storage as [rows, cols] (rows * cols must equal
  // size()): the owning counterpart of view.
  void reshape(int64_t rows, int64_t cols);
  bool is_view() const { return borrowed_; }

  // Counts this tensor's bytes under another category from now on.
  void retag(MemoryCategory category);
  // Frees the storage now; the tensor becomes empty.
  void reset();

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t size() const { return rows_ * cols_; }
  int64_t bytes() const { return size() * static_cast<int64_t>(sizeof(float)); }
  bool empty() const { return size() == 0; }
  bool same_shape(const Tensor& other) const {
    return rows_ == other.rows_ && cols_ == other.cols_;
  }
  MemoryCategory category() const { return category_; }
  DeviceAllocator* allocator() const { return allocator_; }

  float* data() { return data_; }
  const float* data() const { return data_; }
  float* row(int64_t r) { return data_ + r * cols_; }
  const float* row(int64_t r) const { return data_ + r * cols_; }
  float& at(int64_t r, int64_t c) {
    assert(r >= 0 && r < rows_ && c >= 0 && c < cols_);
    return data_[r * cols_ + c];
  }
  float at(int64_t r, int64_t c) const {
    assert(r >= 0 && r < rows_ && c >= 0 && c < cols_);
    return data_[r * cols_ + c];
  }

  void fill(float value);
  void set_zero() { fill(0.0f); }
  // Copies the values of a tensor of the same shape.
  void copy_from(const Tensor& source);
  // this += source (same shape): gradient sums, all-reduce in tests.
  void add(const Tensor& source);
  // this += factor * source (same shape), and this *= factor: PipeMare's
  // weight velocity and extrapolation (core/runtime/pipemare_weights.h).
  void add_scaled(const Tensor& source, float factor);
  void scale(float factor);
  std::vector<float> to_vector() const;

 private:
  Tensor(int64_t rows, int64_t cols, DeviceAllocator* allocator, MemoryCategory category,
         Fill fill);

  float* data_ = nullptr;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  DeviceAllocator* allocator_ = nullptr;
  MemoryCategory category_ = MemoryCategory::Workspace;
  bool borrowed_ = false;  // a view: the storage belongs to another tensor
};

}  // namespace pipelab
