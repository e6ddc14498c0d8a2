#include "core/nn/tensor.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace pipelab {

Tensor::Tensor(int64_t rows, int64_t cols, DeviceAllocator* allocator, MemoryCategory category)
    : Tensor(rows, cols, allocator, category, Fill::Zeros) {}

Tensor::Tensor(int64_t rows, int64_t cols, DeviceAllocator* allocator, MemoryCategory category,
               Fill fill)
    : rows_(rows), cols_(cols), allocator_(allocator), category_(category) {
  if (rows < 0 || cols < 0)
    throw std::invalid_argument("tensor shape must be non-negative, got " + std::to_string(rows) +
                                " x " + std::to_string(cols));
  data_ = allocator_ ? allocator_->allocate(size(), category_, fill)
                     : allocate_aligned_floats(size(), fill);
}

Tensor Tensor::uninitialized(int64_t rows, int64_t cols, DeviceAllocator* allocator,
                             MemoryCategory category) {
  return Tensor(rows, cols, allocator, category, Fill::Uninitialized);
}

Tensor Tensor::from_values(int64_t rows, int64_t cols, const std::vector<float>& values,
                           DeviceAllocator* allocator, MemoryCategory category) {
  if (static_cast<int64_t>(values.size()) != rows * cols)
    throw std::invalid_argument("tensor of " + std::to_string(rows) + " x " + std::to_string(cols) +
                                " needs " + std::to_string(rows * cols) + " values, got " +
                                std::to_string(values.size()));
  Tensor tensor = uninitialized(rows, cols, allocator, category);
  std::copy(values.begin(), values.end(), tensor.data());
  return tensor;
}

Tensor::Tensor(Tensor&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      rows_(std::exchange(other.rows_, 0)),
      cols_(std::exchange(other.cols_, 0)),
      allocator_(std::exchange(other.allocator_, nullptr)),
      category_(other.category_),
      borrowed_(std::exchange(other.borrowed_, false)) {}

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    rows_ = std::exchange(other.rows_, 0);
    cols_ = std::exchange(other.cols_, 0);
    allocator_ = std::exchange(other.allocator_, nullptr);
    category_ = other.category_;
    borrowed_ = std::exchange(other.borrowed_, false);
  }
  return *this;
}

Tensor Tensor::clone(DeviceAllocator* allocator, MemoryCategory category) const {
  Tensor copy = uninitialized(rows_, cols_, allocator, category);
  if (!empty()) std::copy(data_, data_ + size(), copy.data_);
  return copy;
}

Tensor Tensor::borrow(float* data, int64_t count) {
  assert(count >= 0 && (data != nullptr || count == 0));
  Tensor borrowed;
  borrowed.data_ = data;
  borrowed.rows_ = 1;
  borrowed.cols_ = count;
  borrowed.borrowed_ = true;
  return borrowed;
}

Tensor Tensor::view(const Tensor& source, int64_t rows, int64_t cols) {
  if (rows < 0 || cols < 0 || rows * cols != source.size())
    throw std::invalid_argument("cannot view " + std::to_string(source.rows()) + " x " +
                                std::to_string(source.cols()) + " values as " +
                                std::to_string(rows) + " x " + std::to_string(cols));
  Tensor view;
  // Uncounted (no allocator): the values are counted once, by `source`.
  view.data_ = const_cast<float*>(source.data_);
  view.rows_ = rows;
  view.cols_ = cols;
  view.category_ = source.category_;
  view.borrowed_ = true;
  return view;
}

void Tensor::reshape(int64_t rows, int64_t cols) {
  if (rows < 0 || cols < 0 || rows * cols != size())
    throw std::invalid_argument("cannot reshape " + std::to_string(rows_) + " x " +
                                std::to_string(cols_) + " values to " + std::to_string(rows) +
                                " x " + std::to_string(cols));
  rows_ = rows;
  cols_ = cols;
}

void Tensor::retag(MemoryCategory category) {
  if (allocator_) allocator_->retag(bytes(), category_, category);
  category_ = category;
}

void Tensor::reset() {
  if (borrowed_)
    borrowed_ = false;  // the owner frees the storage
  else if (allocator_)
    allocator_->release(data_, size(), category_);
  else
    free_aligned_floats(data_);
  data_ = nullptr;
  rows_ = 0;
  cols_ = 0;
}

void Tensor::fill(float value) { std::fill(data_, data_ + size(), value); }

void Tensor::copy_from(const Tensor& source) {
  assert(same_shape(source));
  std::copy(source.data_, source.data_ + size(), data_);
}

void Tensor::add(const Tensor& source) {
  assert(same_shape(source));
  float* out = data_;
  const float* in = source.data_;
  const int64_t n = size();
  for (int64_t i = 0; i < n; ++i) out[i] += in[i];
}

void Tensor::add_scaled(const Tensor& source, float factor) {
  assert(same_shape(source));
  float* out = data_;
  const float* in = source.data_;
  const int64_t n = size();
  for (int64_t i = 0; i < n; ++i) out[i] += factor * in[i];
}

void Tensor::scale(float factor) {
  const int64_t n = size();
  for (int64_t i = 0; i < n; ++i) data_[i] *= factor;
}

std::vector<float> Tensor::to_vector() const { return std::vector<float>(data_, data_ + size()); }

}  // namespace pipelab
