#include "gpu/memory/device_tensor.h"

#include <cassert>
#include <stdexcept>
#include <string>
#include <utility>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"
#include "gpu/kernels/bf16.h"
#include "gpu/kernels/elementwise.h"
#include "gpu/device/stream_order.h"

namespace pipelab::gpu {
namespace {

int64_t checked_size(int64_t rows, int64_t cols) {
  if (rows < 0 || cols < 0)
    throw std::invalid_argument("tensor shape must be non-negative, got " + std::to_string(rows) +
                                " x " + std::to_string(cols));
  return rows * cols;
}

StreamOnDevice stream_of(const DeviceTensor& tensor) { return {tensor.stream(), tensor.device()}; }

}  // namespace

DeviceTensor::DeviceTensor(int64_t rows, int64_t cols, DeviceBuffer storage)
    : storage_(std::move(storage)), rows_(rows), cols_(cols) {}

DeviceTensor::DeviceTensor(int64_t rows, int64_t cols, CachingAllocator* allocator,
                           MemoryCategory category)
    : DeviceTensor(uninitialized(rows, cols, allocator, category)) {
  set_zero();
}

DeviceTensor DeviceTensor::uninitialized(int64_t rows, int64_t cols, CachingAllocator* allocator,
                                         MemoryCategory category) {
  const int64_t count = checked_size(rows, cols);
  return DeviceTensor(
      rows, cols, DeviceBuffer(count * static_cast<int64_t>(sizeof(float)), allocator, category));
}

DeviceTensor DeviceTensor::uninitialized_idle(int64_t rows, int64_t cols,
                                              CachingAllocator* allocator,
                                              MemoryCategory category) {
  const int64_t count = checked_size(rows, cols);
  return DeviceTensor(rows, cols,
                      DeviceBuffer(count * static_cast<int64_t>(sizeof(float)), allocator, category,
                                   DeviceBuffer::Idle{}));
}

DeviceTensor DeviceTensor::from_host(const Tensor& host, CachingAllocator* allocator,
                                     MemoryCategory category) {
  DeviceTensor tensor = uninitialized(host.rows(), host.cols(), allocator, category);
  tensor.copy_from_host(host.data());
  return tensor;
}

DeviceTensor DeviceTensor::from_values(int64_t rows, int64_t cols, const std::vector<float>& values,
                                       CachingAllocator* allocator, MemoryCategory category) {
  if (static_cast<int64_t>(values.size()) != checked_size(rows, cols))
    throw std::invalid_argument("tensor of " + std::to_string(rows) + " x " + std::to_string(cols) +
                                " needs " + std::to_string(rows * cols) + " values, got " +
                                std::to_string(values.size()));
  DeviceTensor tensor = uninitialized(rows, cols, allocator, category);
  tensor.copy_from_host(values.data());
  return tensor;
}

DeviceTensor::DeviceTensor(DeviceTensor&& other) noexcept
    : storage_(std::move(other.storage_)),
      rows_(std::exchange(other.rows_, 0)),
      cols_(std::exchange(other.cols_, 0)) {}

DeviceTensor& DeviceTensor::operator=(DeviceTensor&& other) noexcept {
  if (this != &other) {
    storage_ = std::move(other.storage_);
    bf16_stale_ = true;  // new values under this tensor's bf16 copy, if it keeps one
    rows_ = std::exchange(other.rows_, 0);
    cols_ = std::exchange(other.cols_, 0);
  }
  return *this;
}

DeviceTensor DeviceTensor::clone(CachingAllocator* allocator, MemoryCategory category) const {
  DeviceTensor copy = uninitialized(rows_, cols_, allocator, category);
  if (!empty()) copy_between(*this, copy);
  return copy;
}

void DeviceTensor::reshape(int64_t rows, int64_t cols) {
  if (checked_size(rows, cols) != size())
    throw std::invalid_argument("cannot reshape a " + std::to_string(rows_) + " x " +
                                std::to_string(cols_) + " tensor to " + std::to_string(rows) +
                                " x " + std::to_string(cols));
  rows_ = rows;
  cols_ = cols;
}

void DeviceTensor::reset() {
  storage_.reset();
  bf16_copy_.reset();
  rows_ = 0;
  cols_ = 0;
}

void DeviceTensor::keep_bf16_copy(MemoryCategory category) {
  bf16_copy_ = DeviceBuffer(size() * static_cast<int64_t>(sizeof(uint16_t)), allocator(), category);
  keeps_bf16_copy_ = true;
  bf16_category_ = category;
  bf16_stale_ = true;
}

const uint16_t* DeviceTensor::refresh_bf16_copy() const {
  assert(has_bf16_copy());
  // Values of another size moved into this slot: the copy follows their size.
  if (bf16_copy_.bytes() != size() * static_cast<int64_t>(sizeof(uint16_t))) {
    bf16_copy_ =
        DeviceBuffer(size() * static_cast<int64_t>(sizeof(uint16_t)), allocator(), bf16_category_);
    bf16_stale_ = true;
  }
  if (bf16_stale_) {
    DeviceGuard guard(device());
    kernels::to_bf16(data(), bf16_copy_.as<uint16_t>(), size(), stream());
    bf16_stale_ = false;
  }
  return bf16_copy_.as<uint16_t>();
}

int DeviceTensor::device() const {
  assert(allocator());
  return allocator()->device();
}

cudaStream_t DeviceTensor::stream() const {
  assert(allocator());
  return allocator()->stream();
}

void DeviceTensor::fill(float value) {
  if (empty()) return;
  DeviceGuard guard(device());
  kernels::fill(data(), size(), value, stream());
}

void DeviceTensor::set_zero() {
  if (empty()) return;
  DeviceGuard guard(device());
  PIPELAB_CUDA_CHECK(cudaMemsetAsync(data(), 0, static_cast<size_t>(bytes()), stream()));
}

void DeviceTensor::copy_from(const DeviceTensor& source) {
  assert(same_shape(source));
  if (empty()) return;
  copy_between(source, *this);
}

void DeviceTensor::copy_from_host(const float* values) {
  if (empty()) return;
  DeviceGuard guard(device());
  // From pageable memory the call returns once the values are staged, so the
  // caller may free them right away.
  PIPELAB_CUDA_CHECK(cudaMemcpyAsync(data(), values, static_cast<size_t>(bytes()),
                                     cudaMemcpyHostToDevice, stream()));
}

void DeviceTensor::copy_from_host(const Tensor& source) {
  if (source.rows() != rows_ || source.cols() != cols_)
    throw std::invalid_argument("cannot copy a " + std::to_string(source.rows()) + " x " +
                                std::to_string(source.cols()) + " host tensor into a " +
                                std::to_string(rows_) + " x " + std::to_string(cols_) +
                                " device tensor");
  copy_from_host(source.data());
}

void DeviceTensor::add(const DeviceTensor& source) {
  assert(same_shape(source) && (empty() || source.device() == device()));
  if (empty()) return;
  wait_for(stream_of(*this), stream_of(source));
  DeviceGuard guard(device());
  kernels::add_into(data(), source.data(), size(), stream());
  wait_for(stream_of(source), stream_of(*this));
}

void DeviceTensor::add_scaled(const DeviceTensor& source, float factor) {
  assert(same_shape(source) && (empty() || source.device() == device()));
  if (empty()) return;
  wait_for(stream_of(*this), stream_of(source));
  DeviceGuard guard(device());
  kernels::add_scaled_into(data(), source.data(), factor, size(), stream());
  wait_for(stream_of(source), stream_of(*this));
}

void DeviceTensor::scale(float factor) {
  if (empty()) return;
  DeviceGuard guard(device());
  kernels::scale(data(), size(), factor, stream());
}

std::vector<float> DeviceTensor::to_vector() const {
  std::vector<float> values(static_cast<size_t>(size()));
  if (empty()) return values;
  DeviceGuard guard(device());
  PIPELAB_CUDA_CHECK(cudaMemcpyAsync(values.data(), data(), static_cast<size_t>(bytes()),
                                     cudaMemcpyDeviceToHost, stream()));
  PIPELAB_CUDA_CHECK(cudaStreamSynchronize(stream()));
  return values;
}

Tensor DeviceTensor::to_host(DeviceAllocator* allocator, MemoryCategory category) const {
  Tensor host(rows_, cols_, allocator, category);
  if (empty()) return host;
  DeviceGuard guard(device());
  PIPELAB_CUDA_CHECK(cudaMemcpyAsync(host.data(), data(), static_cast<size_t>(bytes()),
                                     cudaMemcpyDeviceToHost, stream()));
  PIPELAB_CUDA_CHECK(cudaStreamSynchronize(stream()));
  return host;
}

void copy_between(const DeviceTensor& source, DeviceTensor& target) {
  assert(source.same_shape(target));
  if (source.empty()) return;
  const StreamOnDevice from = stream_of(source);
  const StreamOnDevice to = stream_of(target);
  wait_for(to, from);
  {
    DeviceGuard guard(target.device());
    const size_t bytes = static_cast<size_t>(source.bytes());
    if (source.device() == target.device())
      PIPELAB_CUDA_CHECK(cudaMemcpyAsync(target.data(), source.data(), bytes,
                                         cudaMemcpyDeviceToDevice, to.stream));
    else
      PIPELAB_CUDA_CHECK(cudaMemcpyPeerAsync(target.data(), target.device(), source.data(),
                                             source.device(), bytes, to.stream));
  }
  wait_for(from, to);
}

}  // namespace pipelab::gpu
