// CudaExecutor: real training on NVIDIA GPUs. It is core/runtime's
// PipelineExecutor over CudaBackend: the same lowered schedule, the same one
// executor loop (DeviceWorker), the same run control (start, pause, resume,
// step, stop within one op), the same event stream (a TraceEvent per op with
// its identity, a MemorySample at every allocation change, one StepMetrics
// per step, progress messages), the same divergence failure as the CPU
// executor; only the math and the movement of data differ (cuda_backend.h).
//
// Every virtual device of the dp x tp x pp grid gets a VirtualDevice (its own
// compute stream, cuBLAS handle, CachingAllocator and communication stream)
// on a physical GPU (device_mapping.h: one per GPU when there are enough,
// otherwise contiguous blocks per GPU) and a host thread (its DeviceWorker)
// that queues its op list onto its streams. Messages go through NCCL between
// GPUs and device-to-device copies on one GPU (message_routes.h); collectives
// likewise (device_group.h). Ops are timed with CUDA events mapped onto
// the run's clock, with NVTX ranges of the same names.
//
// Building one checks, before any device memory is used:
//  - that there is a GPU: otherwise ExperimentError "backend.type = cuda, but
//    there is no CUDA device (...); use backend.type = cpu";
//  - that the split fits: each virtual device's estimated peak, summed per GPU,
//    against the GPU's free memory (memory_preflight.h): otherwise
//    ExperimentError naming the GPU, its devices, bytes needed and free.
//    Across processes the ranks exchange their GPUs' identities, then their
//    estimates and free bytes, and every rank sums those of the ranks that
//    share its GPU, NCCL communicators between ranks included, and takes the
//    same decision (rank_memory_check.h); the plan of NCCL between ranks,
//    from those identities, comes first.
// backend.tf32 turns on TF32 tensor-core GEMMs (about 1e-3 relative error).
//
// Times: op events are GPU times (event pairs) mapped onto the run's clock;
// memory samples are taken when the host queues an allocation or a free,
// which runs a little ahead of the GPU (by at most a few ops, see
// op_timings.h), so a curve may lead its ops by that much.
//
// Across processes (pipelab-cli under mpirun) a rank builds only the virtual
// devices it runs, all on one GPU: local rank modulo the GPUs it sees
// (device_mapping.h); tensors to and from other ranks are staged through host
// memory, or go on NCCL where both ends have a GPU of their own
// (cuda_backend.h, rank_comm_plan.h), and rank 0 evaluates, gets every rank's reports and
// names a failing rank, as for the CPU backend (pipeline_executor.h).
//
// Evaluation (training.eval_every, and after the last step) meets every
// worker at the step's boundary; the last to arrive copies replica 0's
// weights to the host (HostStageMirror) and evaluates there, as the CPU
// backend does. Async data parallelism's parameter servers live on the host
// (core/runtime/parameter_server.h), fed through host mirrors; across
// processes on the ranks of replica 0, reached by the others through the
// host transport (remote_parameter_server.h), as on the CPU backend.
#pragma once

#include <string>
#include <vector>

#include "core/runtime/pipeline_executor.h"
#include "gpu/device/device_query.h"
#include "gpu/executor/cuda_backend.h"

namespace pipelab::gpu {

// "backend.type = cuda, but no CUDA device (<reason>); use backend.type = cpu
// (pipelab-cli: --backend cpu)", for query_gpus()'s unavailable_reason.
std::string no_cuda_device_message(const std::string& reason);

class CudaExecutor : public PipelineExecutor<CudaBackend> {
 public:
  // Loads the data, checks the GPUs and the memory, and builds every
  // device's stages. Throws ExperimentError (no GPU, a split that does not
  // fit, an experiment that does not validate) or DataError.
  CudaExecutor(const Experiment& experiment, EventSink& sink, const ExecutorOptions& options = {});
  ~CudaExecutor() override;  // stops and joins every worker

  // For tests and tools: a device this process runs.
  int gpu_of(int device) const { return devices_->devices[static_cast<size_t>(device)]->gpu; }
  const CachingAllocator& allocator(int device) const {
    return devices_->devices[static_cast<size_t>(device)]->context->allocator();
  }
  const MessageRoutes& routes() const { return *devices_->routes; }

 private:
  std::string launch_message() const override { return launch_message_; }
  void after_failure() override;
  // `gpu_of_device`: CUDA device numbers, -1 for the devices other ranks
  // run; `rank_plan`: across processes, plan_between_ranks'.
  void build_devices(const std::vector<int>& gpu_of_device, RankCommPlan rank_plan);
  // Across processes: the host mailboxes and transport of cuda_backend.h.
  void build_host_side();
  // Across processes: the plan of NCCL between ranks (rank_comm_plan.h),
  // from every rank's GPU identity (`gpu_of_rank`, by rank).
  RankCommPlan plan_between_ranks(const std::vector<std::string>& gpu_of_rank) const;
  // Across processes: this rank's communicators of `rank_plan`, on `gpu`.
  void build_rank_world(int gpu, RankCommPlan rank_plan);
  // All-reduce groups inside this process, rings over the host transport for those spanning ranks.
  void build_groups();
  std::string describe_launch(const GpuInventory& inventory,
                              const std::vector<int>& gpu_of_device) const;

  std::string launch_message_;
};

}  // namespace pipelab::gpu

namespace pipelab {
extern template class DeviceWorker<gpu::CudaBackend>;
extern template class PipelineExecutor<gpu::CudaBackend>;
}  // namespace pipelab
