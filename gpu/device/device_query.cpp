#include "gpu/device/device_query.h"

#include <cuda_runtime.h>
#include <unistd.h>

#include <cstring>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"

#ifdef PIPELAB_HAVE_NCCL
#include <nccl.h>
#endif

namespace pipelab::gpu {

GpuInventory query_gpus(bool read_free_bytes) {
  GpuInventory inventory;
#ifdef PIPELAB_HAVE_NCCL
  inventory.nccl_available = true;
  int version = 0;
  if (ncclGetVersion(&version) == ncclSuccess) inventory.nccl_version = version;
#endif
  int count = 0;
  // No driver or no device is a normal answer here, not an error to throw.
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    inventory.unavailable_reason = std::string("no CUDA device (") + cudaGetErrorString(status) + ")";
    cudaGetLastError();  // clear the sticky error so later calls start clean
    return inventory;
  }
  if (count == 0) {
    inventory.unavailable_reason = "no CUDA device";
    return inventory;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    GpuInfo info;
    info.index = i;
    info.name = prop.name;
    info.total_bytes = static_cast<int64_t>(prop.totalGlobalMem);
    info.compute_major = prop.major;
    info.compute_minor = prop.minor;
    info.multiprocessors = prop.multiProcessorCount;
    if (read_free_bytes) {
      size_t free_bytes = 0, total_bytes = 0;
      if (cudaSetDevice(i) == cudaSuccess &&
          cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
        info.free_bytes = static_cast<int64_t>(free_bytes);
    }
    inventory.gpus.push_back(info);
  }
  return inventory;
}

std::string gpu_identity(int gpu) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) std::strcpy(host, "unknown-host");
  char bus[64] = {};
  PIPELAB_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), gpu));
  return std::string(host) + "/" + bus;
}

int64_t free_gpu_bytes(int gpu) {
  DeviceGuard guard(gpu);
  size_t free_bytes = 0, total_bytes = 0;
  PIPELAB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return static_cast<int64_t>(free_bytes);
}

}  // namespace pipelab::gpu
