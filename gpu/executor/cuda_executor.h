// CudaExecutor: real training on NVIDIA GPUs. The twin of core/runtime's
// CpuExecutor: the same lowered schedule (TrainingProgram over build_schedule),
// the same run control (start, pause, resume, step, stop within one op), the
// same event stream (a TraceEvent per op with its identity, a MemorySample at
// every allocation change, one StepMetrics per step, progress messages), the
// same divergence failure; only the math and the movement of data differ.
//
// Every virtual device of the dp x tp x pp grid gets a VirtualDevice (its own
// compute stream, cuBLAS handle, CachingAllocator and communication stream)
// on a physical GPU (device_mapping.h: one per GPU when there are enough,
// otherwise contiguous blocks per GPU) and a host thread (CudaDeviceWorker)
// that queues its op list onto its streams. Messages go through NCCL between
// GPUs and device-to-device copies on one GPU (message_routes.h); all-reduces
// likewise (device_all_reduce.h). Ops are timed with CUDA events mapped onto
// the run's clock, with NVTX ranges of the same names.
//
// Building one checks, before any device memory is used:
//  - that there is a GPU: otherwise ExperimentError "backend.type = cuda, but
//    there is no CUDA device (...); use backend.type = cpu";
//  - that the split fits: each virtual device's estimated peak, summed per GPU,
//    against the GPU's free memory (memory_preflight.h): otherwise
//    ExperimentError naming the GPU, its devices, bytes needed and free.
// backend.tf32 turns on TF32 tensor-core GEMMs (about 1e-3 relative error).
//
// Times: op events are GPU times (event pairs) mapped onto the run's clock;
// memory samples are taken when the host queues an allocation or a free,
// which runs a little ahead of the GPU (by at most a few ops, see
// op_timings.h), so a curve may lead its ops by that much.
//
// Evaluation (training.eval_every, and after the last step) meets every
// worker at the step's boundary; the last to arrive copies replica 0's
// weights to the host (HostStageMirror) and evaluates there, as the CPU
// backend does. Async data parallelism's parameter servers live on the host
// (core/runtime/parameter_server.h), fed through host mirrors.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/runtime/evaluation.h"
#include "core/runtime/parameter_server.h"
#include "core/runtime/rendezvous.h"
#include "core/runtime/threaded_executor.h"
#include "core/runtime/training_data.h"
#include "gpu/executor/cuda_device_worker.h"
#include "gpu/comm/comm_world.h"
#include "gpu/comm/device_all_reduce.h"
#include "gpu/comm/message_routes.h"
#include "gpu/executor/virtual_device.h"

namespace pipelab::gpu {

// "backend.type = cuda, but no CUDA device (<reason>); use backend.type = cpu
// (pipelab-cli: --backend cpu)", for query_gpus()'s unavailable_reason.
std::string no_cuda_device_message(const std::string& reason);

// The run's life cycle (start, pause, step, stop, state, ...) is
// ThreadedExecutor's, as for the CPU; this class builds the GPU devices, their
// communication and their workers.
class CudaExecutor : public ThreadedExecutor {
 public:
  // Loads the data, checks the GPUs and the memory, and builds every
  // device's stages. Throws ExperimentError (no GPU, a split that does not
  // fit, an experiment that does not validate) or DataError.
  CudaExecutor(const Experiment& experiment, EventSink& sink, const ExecutorOptions& options = {});
  ~CudaExecutor() override;  // stops and joins every worker

  // For tests and tools.
  int gpu_of(int device) const { return devices_[static_cast<size_t>(device)]->gpu; }
  const CachingAllocator& allocator(int device) const {
    return devices_[static_cast<size_t>(device)]->context->allocator();
  }
  const MessageRoutes& routes() const { return *routes_; }

 private:
  void run_worker(int device) override;
  void release_in_flight() override;
  std::string launch_message() const override { return launch_message_; }
  void build_devices(const std::vector<int>& gpu_of_device);
  void build_groups();
  void make_parameter_servers();
  void evaluate_after(int step);

  std::string launch_message_;

  // Declared before everything that holds device memory: destroyed last.
  std::vector<std::unique_ptr<VirtualDevice>> devices_;
  std::unique_ptr<CommWorld> comm_world_;  // outlives the routes and groups using it
  std::unique_ptr<MessageRoutes> routes_;
  std::vector<std::unique_ptr<DeviceAllReduce>> groups_;
  std::vector<DeviceAllReduce*> data_parallel_group_of_;    // per device; null: none
  std::vector<DeviceAllReduce*> tensor_parallel_group_of_;  // per device; null: none

  std::unique_ptr<TrainingData> data_;
  std::vector<StageProfile> profiles_;
  std::vector<LayerRange> stage_ranges_;
  std::vector<TensorParallelRole> tp_roles_;
  std::unique_ptr<Rendezvous> rendezvous_;
  std::vector<MeetingPoint> meeting_points_;
  std::unique_ptr<Evaluator> evaluator_;
  std::vector<std::unique_ptr<ParameterServer>> servers_;
  std::unique_ptr<CudaWorkerShared> shared_;
  std::vector<std::unique_ptr<CudaDeviceWorker>> workers_;
};

}  // namespace pipelab::gpu
