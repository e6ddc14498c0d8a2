// DeviceTensor: a 2-D row-major float32 matrix [rows, cols] in GPU memory, the
// CUDA twin of core/nn's Tensor. It owns its storage (RAII, move-only), which
// comes from a CachingAllocator and is counted under the tensor's
// MemoryCategory until the tensor dies, exactly as a Tensor's bytes are.
//
// Work on a tensor (zero-fill, copies, fill, add) is queued on its allocator's
// stream and returns without waiting, except the copies back to the host,
// which wait for it. Methods that launch work make the tensor's GPU current
// for the call, so any host thread may use them.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "core/nn/tensor.h"
#include "gpu/memory/device_buffer.h"

namespace pipelab::gpu {

class DeviceTensor {
 public:
  DeviceTensor() = default;  // empty: 0 x 0, no storage
  // Zero-filled, like Tensor. Throws std::invalid_argument for negative sizes or
  // a missing allocator, GpuOutOfMemory when the GPU cannot hold it.
  DeviceTensor(int64_t rows, int64_t cols, CachingAllocator* allocator,
               MemoryCategory category = MemoryCategory::Workspace);
  // Storage left as it is: for outputs a kernel overwrites entirely.
  static DeviceTensor uninitialized(int64_t rows, int64_t cols, CachingAllocator* allocator,
                                    MemoryCategory category = MemoryCategory::Workspace);
  // Uninitialised storage that no stream is using (DeviceBuffer::Idle), for a
  // message another stream writes first; record_stream every stream using it.
  static DeviceTensor uninitialized_idle(int64_t rows, int64_t cols, CachingAllocator* allocator,
                                         MemoryCategory category);
  // A copy of a host tensor (same shape).
  static DeviceTensor from_host(const Tensor& host, CachingAllocator* allocator,
                                MemoryCategory category = MemoryCategory::Workspace);
  // A tensor holding `values` (rows * cols of them, row-major); for tests and data.
  static DeviceTensor from_values(int64_t rows, int64_t cols, const std::vector<float>& values,
                                  CachingAllocator* allocator,
                                  MemoryCategory category = MemoryCategory::Workspace);

  DeviceTensor(DeviceTensor&& other) noexcept;
  DeviceTensor& operator=(DeviceTensor&& other) noexcept;
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;

  // A copy on the same allocator, with the same or another category.
  DeviceTensor clone() const { return clone(allocator(), category()); }
  DeviceTensor clone(MemoryCategory category) const { return clone(allocator(), category); }
  // A copy on another allocator: another virtual device on this GPU, or another
  // GPU (a peer copy). Ordered after the work queued on this tensor's stream, and
  // this tensor's later work waits for the copy.
  DeviceTensor clone(CachingAllocator* allocator, MemoryCategory category) const;

  void retag(MemoryCategory category) { storage_.retag(category); }

  // Mixed precision (training.precision = bf16-mixed): a bfloat16 copy of the
  // values (bf16_math.h's bits) that the GEMMs of cublas_gemm.h read instead of
  // the float32 ones, which become the master copy the optimizer updates.
  // keep_bf16_copy allocates it, counted under `category`; refresh_bf16_copy
  // returns it, first converting the values into it (queued on the tensor's
  // stream) if they may have changed since: every write goes through the
  // non-const data() or a move into this tensor, which mark the copy stale, so
  // a weight is converted once after each update however many GEMMs read it.
  // The copy belongs to this tensor object (a layer's parameter slot), not to
  // its values: moves and swaps leave it in place, so a slot whose values a
  // weight stash swaps keeps its copy and refreshes it from the values in use.
  // A clone has none.
  // reset() frees the copy with the values; the slot still keeps one, made
  // again for the next values (ZeRO 3 releases and regathers weights).
  void keep_bf16_copy(MemoryCategory category);
  bool has_bf16_copy() const { return keeps_bf16_copy_; }
  const uint16_t* refresh_bf16_copy() const;
  // Mixed precision's weight gradients: the GEMMs that accumulate into this
  // tensor (linear_backward_weight) read their inputs rounded to bf16. Like
  // the copy, this belongs to the tensor object and stays on moves.
  void accumulate_bf16_products() { bf16_products_ = true; }
  bool accumulates_bf16_products() const { return bf16_products_; }
  // Work on `stream` uses this tensor too (see DeviceBuffer::record_stream).
  void record_stream(StreamOnDevice stream) { storage_.record_stream(stream); }
  void reset();  // frees the storage (and any bf16 copy) now; the tensor becomes empty
  // The same floats seen as [rows, cols] (as Tensor::reshape: a sequence
  // model's [batch, seq * dim] is [batch * seq, dim] row-major). Throws
  // std::invalid_argument when rows * cols differs from size().
  void reshape(int64_t rows, int64_t cols);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t size() const { return rows_ * cols_; }
  int64_t bytes() const { return size() * static_cast<int64_t>(sizeof(float)); }
  bool empty() const { return size() == 0; }
  bool same_shape(const DeviceTensor& other) const {
    return rows_ == other.rows_ && cols_ == other.cols_;
  }
  MemoryCategory category() const { return storage_.category(); }
  CachingAllocator* allocator() const { return storage_.allocator(); }
  int device() const;           // the GPU it lives on
  cudaStream_t stream() const;  // its allocator's stream

  float* data() {
    bf16_stale_ = true;  // the caller may write: the bf16 copy may be out of date
    return storage_.as<float>();
  }
  const float* data() const { return storage_.as<float>(); }

  void fill(float value);
  void set_zero();
  // Copies the values of a tensor of the same shape (from any allocator or GPU).
  void copy_from(const DeviceTensor& source);
  // Copies rows() * cols() floats from host memory.
  void copy_from_host(const float* values);
  void copy_from_host(const Tensor& source);  // same shape
  // this += source (same shape, same GPU): gradient sums, same-GPU all-reduce.
  void add(const DeviceTensor& source);
  // this += factor * source (same shape, same GPU): PipeMare's weight velocity
  // and extrapolation (core/runtime/pipemare_weights.h).
  void add_scaled(const DeviceTensor& source, float factor);
  // this *= factor
  void scale(float factor);

  // Waits for the tensor's stream and copies the values to the host.
  std::vector<float> to_vector() const;
  Tensor to_host(DeviceAllocator* allocator = nullptr,
                 MemoryCategory category = MemoryCategory::Workspace) const;

 private:
  DeviceTensor(int64_t rows, int64_t cols, DeviceBuffer storage);

  DeviceBuffer storage_;
  mutable DeviceBuffer bf16_copy_;  // derived from storage_'s values: refreshing it is not a change
  mutable bool bf16_stale_ = true;  // whether the values may differ from bf16_copy_'s
  bool keeps_bf16_copy_ = false;
  MemoryCategory bf16_category_ = MemoryCategory::Weights;  // what the copy is counted as
  bool bf16_products_ = false;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
};

// Copies `source` into `target` (same shape) wherever each lives: same
// allocator, another allocator on the same GPU, or another GPU. Runs on the
// target's stream after the source's queued work; the source's stream then
// waits for the copy (so its memory is not reused under it).
void copy_between(const DeviceTensor& source, DeviceTensor& target);

}  // namespace pipelab::gpu
