// CpuExecutor: real training on CPU threads. Every virtual device of the
// dp x tp x pp grid is a worker thread (device_worker.h) that runs its op list
// of the lowered schedule, the same one the simulator reads; devices exchange
// real activations and gradients through mailboxes and all-reduce real
// gradients over rings. Reports every op's measured begin/end, a memory sample
// at every allocation change, and one StepMetrics per training step.
//
// Deterministic: the same experiment gives the same numbers on every run, and
// every synchronous schedule gives single-device training up to float
// reassociation (weights depend on seed and layer only, dropout on seed,
// layer, step and global sample index, and micro-batch gradients are scaled by
// 1 / global batch and summed).
//
// Memory on a device: its allocator counts weights, gradients and optimizer
// state from construction, activations kept between F and B, received
// messages as CommBuffers until their receive ends, PipeDream's older weight
// versions as StashedWeights, and the data-parallel all-reduce's staging
// buffer as Workspace. Async data parallelism's parameter servers belong to no
// device and are not counted (in a run over processes, the weights a replica
// pulls from another rank count as CommBuffers on it until copied in).
//
// Evaluation (training.eval_every, and after the last step) makes every worker
// meet at the step's boundary; the last to arrive copies the weights of
// replica 0 (and the experts of the rest of its expert-parallel group) into a
// whole model and runs the validation set. In a run over processes the other
// ranks send those weights to rank 0's device 0 (briefly counted there as
// CommBuffers), and rank 0 evaluates.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/runtime/cpu_backend.h"
#include "core/runtime/pipeline_executor.h"

namespace pipelab {

// The run's life cycle is ThreadedExecutor's, the loop DeviceWorker's; this
// class builds the CPU devices (allocators and mailboxes).
class CpuExecutor : public PipelineExecutor<CpuBackend> {
 public:
  // Loads the data and builds every device's stages. Throws ExperimentError
  // (an experiment that does not validate or cannot be split) or DataError.
  CpuExecutor(const Experiment& experiment, EventSink& sink, const ExecutorOptions& options = {});
  ~CpuExecutor() override;  // stops and joins every worker

  // For tests and tools: a device this process runs.
  const DeviceAllocator& allocator(int device) const { return *devices_->allocators[device]; }
  const TrainingData& data() const { return *data_; }

 private:
  std::string launch_message() const override;
};

extern template class DeviceWorker<CpuBackend>;
extern template class PipelineExecutor<CpuBackend>;

}  // namespace pipelab
