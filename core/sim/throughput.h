// What a predicted step achieves, the way Megatron-LM's papers report it:
// model FLOPs (every layer's forward and backward once; recomputation is not
// counted) per step, divided by the step time and the device count, gives the
// achieved FLOP/s per device; over the device's dense datasheet peak in the
// run's GEMM precision (bf16 for bf16-mixed, fp32 otherwise) it is the model
// FLOPs utilisation (MFU).
#pragma once

#include "core/io/experiment.h"
#include "core/sim/experiment_prediction.h"

namespace pipelab {

struct Throughput {
  double model_flops_per_step = 0;  // all devices together
  double step_seconds = 0;          // makespan / steps simulated
  int devices = 0;
  double achieved_flops_per_device = 0;
  double peak_flops_per_device = 0;  // datasheet, dense, in the GEMM precision
  double mfu = 0;                    // achieved / peak
};

// Model FLOPs of one training step: every layer's forward and backward FLOPs
// on the whole model (no split, no recomputation), per sample, times the
// batch. The same for every split of the same model and batch, so MFU ranks
// splits as their step times do.
double model_flops_per_step(const ModelSpec& model, int64_t batch_size);

// The throughput of `prediction` (made from `experiment` on a device of the
// catalogue, not unit costs). Throws ExperimentError for unit costs.
Throughput predicted_throughput(const Experiment& experiment, const Prediction& prediction);

}  // namespace pipelab
