#include "gpu/layers/device_context.h"

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"

namespace pipelab::gpu {

DeviceContext::DeviceContext(int gpu, GemmPrecision precision) : gpu_(gpu), precision_(precision) {
  DeviceGuard guard(gpu_);
  try {
    // Non-blocking: no implicit ordering with the legacy default stream, which
    // other libraries' work may use.
    PIPELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    allocator_ = std::make_unique<CachingAllocator>(gpu_, stream_);
    PIPELAB_CUBLAS_CHECK(cublasCreate(&cublas_));
    PIPELAB_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
    cublas_workspace_ =
        DeviceBuffer(kCublasWorkspaceBytes, allocator_.get(), MemoryCategory::Workspace);
    PIPELAB_CUBLAS_CHECK(cublasSetWorkspace(cublas_, cublas_workspace_.data(),
                                            static_cast<size_t>(cublas_workspace_.bytes())));
    set_gemm_precision(cublas_, precision_);
  } catch (...) {
    release();
    throw;
  }
}

DeviceContext::~DeviceContext() { release(); }

void DeviceContext::release() noexcept {
  DeviceGuard guard(gpu_, DeviceGuard::NoThrow{});
  if (stream_) PIPELAB_CUDA_WARN(cudaStreamSynchronize(stream_));
  if (cublas_) PIPELAB_CUBLAS_WARN(cublasDestroy(cublas_));
  cublas_ = nullptr;
  cublas_workspace_.reset();
  allocator_.reset();  // gives its cached blocks back to CUDA
  if (stream_) PIPELAB_CUDA_WARN(cudaStreamDestroy(stream_));
  stream_ = nullptr;
}

void DeviceContext::set_precision(GemmPrecision precision) {
  set_gemm_precision(cublas_, precision);
  precision_ = precision;
}

void DeviceContext::make_current() const { PIPELAB_CUDA_CHECK(cudaSetDevice(gpu_)); }

void DeviceContext::synchronize() const {
  DeviceGuard guard(gpu_);
  PIPELAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace pipelab::gpu
