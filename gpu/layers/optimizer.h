// GpuOptimizer: SGD (with momentum), Adam and AdamW with PyTorch's semantics,
// exactly as core/nn/optimizer.h defines them (same settings type, same checks,
// same per-element arithmetic: kernels/optimizer_math.h), stepping device
// parameters. State is allocated at construction on each parameter's allocator
// and counted as OptimizerState. step() queues one kernel per parameter on the
// parameter's stream and reads the gradients as they are; the caller zeroes them.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/nn/optimizer.h"
#include "gpu/memory/device_tensor.h"
#include "gpu/kernels/optimizer_math.h"

namespace pipelab::gpu {

// A trainable device tensor and its gradient (same shape).
using GpuParameter = BasicParameter<DeviceTensor>;

class GpuOptimizer {
 public:
  // Throws std::invalid_argument naming the setting when one is out of range
  // (the CPU optimizer's checks and messages).
  GpuOptimizer(const OptimizerSettings& settings, std::vector<GpuParameter> parameters);
  GpuOptimizer(const GpuOptimizer&) = delete;
  GpuOptimizer& operator=(const GpuOptimizer&) = delete;

  void step();
  int64_t steps_taken() const { return steps_taken_; }
  void set_learning_rate(double lr) { settings_.lr = lr; }
  const OptimizerSettings& settings() const { return settings_; }
  int64_t state_bytes() const;

 private:
  bool uses_velocity() const {
    return settings_.type == OptimizerType::Sgd && settings_.momentum > 0;
  }

  OptimizerSettings settings_;
  std::vector<GpuParameter> parameters_;
  // SGD with momentum: one velocity per parameter; Adam(W): m at 2i, v at 2i + 1.
  std::vector<DeviceTensor> state_;
  int64_t steps_taken_ = 0;
};

// Adam's (and AdamW's) scalars for step t (counting from 1), computed in double
// as core/nn and PyTorch compute them.
optimizer_math::AdamScalars adam_scalars(const OptimizerSettings& settings, int64_t step);

std::unique_ptr<GpuOptimizer> make_gpu_optimizer(const OptimizerSettings& settings,
                                                 std::vector<GpuParameter> parameters);

}  // namespace pipelab::gpu
