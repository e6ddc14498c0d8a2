#include "gpu/device/cuda_check.h"

#include <cstdio>

namespace pipelab::gpu {

void throw_cuda_error(const char* what, const char* detail, const char* file, int line) {
  throw CudaError(std::string(what) + " failed: " + detail + " (" + file + ":" + std::to_string(line) +
                  ")");
}

void warn_cuda_error(const char* what, const char* detail, const char* file, int line) {
  std::fprintf(stderr, "warning: %s failed: %s (%s:%d)\n", what, detail, file, line);
}

const char* cublas_status_text(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "cuBLAS not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "cuBLAS allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "invalid value";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "architecture mismatch";
    case CUBLAS_STATUS_MAPPING_ERROR: return "mapping error";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "execution failed";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "internal error";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "not supported";
    default: return "unknown cuBLAS status";
  }
}

}  // namespace pipelab::gpu
