#include "gpu/executor/backend_registration.h"

#include "core/runtime/executor.h"
#include "gpu/device/device_query.h"
#include "gpu/executor/cuda_executor.h"

namespace pipelab::gpu {

void register_cuda_backend() {
  register_backend(
      "cuda",
      [](const Experiment& experiment, EventSink& sink,
         const ExecutorOptions& options) -> std::unique_ptr<Executor> {
        return std::make_unique<CudaExecutor>(experiment, sink, options);
      },
      [] {
        const GpuInventory inventory = query_gpus();
        if (!inventory.gpus.empty()) return std::string();
        return inventory.unavailable_reason.empty() ? std::string("no CUDA device")
                                                    : inventory.unavailable_reason;
      },
      ProcessReach::AcrossProcesses);
}

}  // namespace pipelab::gpu
