// Optimizers with PyTorch's semantics, stepping a list of (parameter, gradient)
// pairs. Their state is allocated up front on each parameter's allocator and
// counted as OptimizerState (PyTorch allocates on the first step; the numbers
// are the same from then on).
//
//   sgd    g' = g + wd p;  v = momentum v + g' (v starts at 0, so the first
//          v = g', as PyTorch's first step); p -= lr v.  No state without momentum.
//   adam   g' = g + wd p;  m = b1 m + (1 - b1) g';  v = b2 v + (1 - b2) g'^2;
//          p -= (lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps)
//   adamw  as adam with g' = g, after the decoupled decay p *= 1 - lr wd.
//
// step() reads the gradients as they are (accumulated over micro-batches); the
// caller zeroes them afterwards.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/nn/basic_layer.h"
#include "core/nn/tensor.h"

namespace pipelab {

// A trainable host tensor and its gradient (same shape).
using Parameter = BasicParameter<Tensor>;

enum class OptimizerType { Sgd, Adam, AdamW };
const char* optimizer_type_name(OptimizerType type);  // "sgd", "adam", "adamw"
std::optional<OptimizerType> parse_optimizer_type(const std::string& name);

struct OptimizerSettings {
  OptimizerType type = OptimizerType::Sgd;
  double lr = 0.05;
  double momentum = 0.0;  // sgd
  double beta1 = 0.9;     // adam, adamw
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

class Optimizer {
 public:
  // Throws std::invalid_argument naming the setting when one is out of range
  // (lr < 0, momentum < 0, betas outside [0, 1), eps <= 0, weight_decay < 0).
  // The state is counted as `state_category` (Host: optimizer offloading).
  Optimizer(const OptimizerSettings& settings, std::vector<Parameter> parameters,
            MemoryCategory state_category = MemoryCategory::OptimizerState);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter from its gradient.
  void step();
  int64_t steps_taken() const { return steps_taken_; }
  void set_learning_rate(double lr) { settings_.lr = lr; }
  const OptimizerSettings& settings() const { return settings_; }
  int64_t state_bytes() const;

 protected:
  // Updates parameter i; `step` counts from 1.
  virtual void update(size_t i, int64_t step) = 0;
  // A zeroed state tensor shaped like parameter i, counted as state_category_.
  Tensor make_state(size_t i) const;

  OptimizerSettings settings_;
  MemoryCategory state_category_;
  std::vector<Parameter> parameters_;
  std::vector<Tensor> state_;  // subclasses' state tensors, for state_bytes

 private:
  int64_t steps_taken_ = 0;
};

class SgdOptimizer : public Optimizer {
 public:
  SgdOptimizer(const OptimizerSettings& settings, std::vector<Parameter> parameters,
               MemoryCategory state_category = MemoryCategory::OptimizerState);

 protected:
  void update(size_t i, int64_t step) override;
};

// Adam, or AdamW when settings.type is AdamW.
class AdamOptimizer : public Optimizer {
 public:
  AdamOptimizer(const OptimizerSettings& settings, std::vector<Parameter> parameters,
                MemoryCategory state_category = MemoryCategory::OptimizerState);

 protected:
  void update(size_t i, int64_t step) override;
};

std::unique_ptr<Optimizer> make_optimizer(const OptimizerSettings& settings,
                                          std::vector<Parameter> parameters,
                                          MemoryCategory state_category = MemoryCategory::OptimizerState);

}  // namespace pipelab
