// Checks for every CUDA runtime, cuBLAS and NCCL call: a failure throws
// CudaError naming the call, the file and the line.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace pipelab::gpu {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda_error(const char* what, const char* detail, const char* file, int line);
// For destructors, which must not throw: prints the failure to stderr instead.
void warn_cuda_error(const char* what, const char* detail, const char* file, int line);
const char* cublas_status_text(cublasStatus_t status);

}  // namespace pipelab::gpu

#define PIPELAB_CUDA_CHECK(call)                                                              \
  do {                                                                                        \
    cudaError_t pipelab_status_ = (call);                                                     \
    if (pipelab_status_ != cudaSuccess)                                                       \
      ::pipelab::gpu::throw_cuda_error(#call, cudaGetErrorString(pipelab_status_), __FILE__,  \
                                       __LINE__);                                             \
  } while (0)

#define PIPELAB_CUBLAS_CHECK(call)                                                            \
  do {                                                                                        \
    cublasStatus_t pipelab_status_ = (call);                                                  \
    if (pipelab_status_ != CUBLAS_STATUS_SUCCESS)                                             \
      ::pipelab::gpu::throw_cuda_error(                                                       \
          #call, ::pipelab::gpu::cublas_status_text(pipelab_status_), __FILE__, __LINE__);    \
  } while (0)

// In destructors and other places that must not throw: report and carry on.
#define PIPELAB_CUDA_WARN(call)                                                               \
  do {                                                                                        \
    cudaError_t pipelab_status_ = (call);                                                     \
    if (pipelab_status_ != cudaSuccess)                                                       \
      ::pipelab::gpu::warn_cuda_error(#call, cudaGetErrorString(pipelab_status_), __FILE__,   \
                                      __LINE__);                                              \
  } while (0)

#define PIPELAB_CUBLAS_WARN(call)                                                             \
  do {                                                                                        \
    cublasStatus_t pipelab_status_ = (call);                                                  \
    if (pipelab_status_ != CUBLAS_STATUS_SUCCESS)                                             \
      ::pipelab::gpu::warn_cuda_error(                                                        \
          #call, ::pipelab::gpu::cublas_status_text(pipelab_status_), __FILE__, __LINE__);    \
  } while (0)

#ifdef PIPELAB_HAVE_NCCL
#include <nccl.h>
#define PIPELAB_NCCL_CHECK(call)                                                              \
  do {                                                                                        \
    ncclResult_t pipelab_status_ = (call);                                                    \
    if (pipelab_status_ != ncclSuccess)                                                       \
      ::pipelab::gpu::throw_cuda_error(#call, ncclGetErrorString(pipelab_status_), __FILE__,  \
                                       __LINE__);                                             \
  } while (0)
#define PIPELAB_NCCL_WARN(call)                                                               \
  do {                                                                                        \
    ncclResult_t pipelab_status_ = (call);                                                    \
    if (pipelab_status_ != ncclSuccess)                                                       \
      ::pipelab::gpu::warn_cuda_error(#call, ncclGetErrorString(pipelab_status_), __FILE__,   \
                                      __LINE__);                                              \
  } while (0)
#endif
