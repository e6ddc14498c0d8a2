// DeviceContext: what one (virtual) device of the CUDA backend computes with:
// its GPU, a stream that all its work is queued on, a cuBLAS handle bound to
// that stream, and its CachingAllocator. Several contexts may share one GPU
// (virtual devices: each has its own stream, handle and memory accounting).
//
// The cuBLAS workspace (32 MiB, what NVIDIA recommends for Hopper) comes from
// the allocator and is counted as Workspace, so cuBLAS allocates nothing
// behind the accounting's back.
//
// Constructing one touches the GPU (and throws CudaError when there is none),
// so create contexts only after query_gpus() found a device.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>

#include "gpu/memory/caching_allocator.h"
#include "gpu/layers/cublas_gemm.h"
#include "gpu/memory/device_buffer.h"
#include "gpu/device/stream_order.h"

namespace pipelab::gpu {

class DeviceContext {
 public:
  static constexpr int64_t kCublasWorkspaceBytes = 32ll << 20;

  explicit DeviceContext(int gpu, GemmPrecision precision = GemmPrecision::Fp32);
  // Waits for the stream, then frees the workspace, the handle and the stream.
  // Every tensor made on this context's allocator must be gone by then.
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  int gpu() const { return gpu_; }
  cudaStream_t stream() const { return stream_; }
  StreamOnDevice stream_on_device() const { return {stream_, gpu_}; }
  cublasHandle_t cublas() const { return cublas_; }
  CachingAllocator& allocator() { return *allocator_; }
  const CachingAllocator& allocator() const { return *allocator_; }

  GemmPrecision precision() const { return precision_; }
  void set_precision(GemmPrecision precision);
  // training.precision = bf16-mixed: layers built on this context keep a bf16
  // copy of the weights their linear products read (GpuLayer::gemm_weights).
  bool mixed_bf16() const { return mixed_bf16_; }
  void set_mixed_bf16(bool mixed) { mixed_bf16_ = mixed; }
  // Under bf16-mixed, layers keep the values they keep only for bf16 GEMMs in
  // bf16 (gpu/layers/kept_bf16.h). On by default; switched off only to
  // check that keeping them so changes no result (bf16_mixed_test.cpp).
  bool keeps_bf16_gemm_inputs() const { return mixed_bf16_ && keep_bf16_gemm_inputs_; }
  void set_keep_bf16_gemm_inputs(bool keep) { keep_bf16_gemm_inputs_ = keep; }

  // Makes this context's GPU current on the calling thread.
  void make_current() const;
  // Waits until everything queued on the stream has run.
  void synchronize() const;

 private:
  void release() noexcept;  // frees whatever was created, in reverse order

  const int gpu_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::unique_ptr<CachingAllocator> allocator_;
  DeviceBuffer cublas_workspace_;
  GemmPrecision precision_;
  bool mixed_bf16_ = false;
  bool keep_bf16_gemm_inputs_ = true;
};

}  // namespace pipelab::gpu
