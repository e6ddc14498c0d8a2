#include "gpu/layers/optimizer.h"

#include <cassert>
#include <cmath>

#include "gpu/device/device_guard.h"
#include "gpu/kernels/optimizers.h"

namespace pipelab::gpu {
namespace {

// The CPU optimizer's constructor checks the settings (and throws its
// messages); with no parameters it allocates nothing. One set of rules.
void check_settings(const OptimizerSettings& settings) { make_optimizer(settings, {}); }

DeviceTensor make_state(const DeviceTensor& value) {
  return DeviceTensor(value.rows(), value.cols(), value.allocator(),
                      MemoryCategory::OptimizerState);
}

}  // namespace

optimizer_math::AdamScalars adam_scalars(const OptimizerSettings& s, int64_t step) {
  const bool decoupled = s.type == OptimizerType::AdamW;
  const double t = static_cast<double>(step);
  optimizer_math::AdamScalars scalars;
  scalars.step_size = static_cast<float>(s.lr / (1.0 - std::pow(s.beta1, t)));
  scalars.correction2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(s.beta2, t)));
  scalars.beta1 = static_cast<float>(s.beta1);
  scalars.beta2 = static_cast<float>(s.beta2);
  scalars.eps = static_cast<float>(s.eps);
  scalars.coupled_decay = decoupled ? 0.0f : static_cast<float>(s.weight_decay);
  scalars.decay_factor = decoupled ? static_cast<float>(1.0 - s.lr * s.weight_decay) : 1.0f;
  return scalars;
}

GpuOptimizer::GpuOptimizer(const OptimizerSettings& settings, std::vector<GpuParameter> parameters)
    : settings_(settings), parameters_(std::move(parameters)) {
  check_settings(settings_);
  for (const GpuParameter& p : parameters_) {
    assert(p.value && p.grad && p.value->same_shape(*p.grad));
    if (uses_velocity()) {
      state_.push_back(make_state(*p.value));
    } else if (settings_.type != OptimizerType::Sgd) {
      state_.push_back(make_state(*p.value));  // first moment m
      state_.push_back(make_state(*p.value));  // second moment v
    }
  }
}

void GpuOptimizer::step() {
  ++steps_taken_;
  const bool adam = settings_.type != OptimizerType::Sgd;
  const optimizer_math::AdamScalars scalars =
      adam ? adam_scalars(settings_, steps_taken_) : optimizer_math::AdamScalars{};
  for (size_t i = 0; i < parameters_.size(); ++i) {
    DeviceTensor& value = *parameters_[i].value;
    const DeviceTensor& grad = *parameters_[i].grad;
    if (value.empty()) continue;
    DeviceGuard guard(value.device());
    if (adam) {
      kernels::adam_step(value.data(), grad.data(), state_[2 * i].data(), state_[2 * i + 1].data(),
                         value.size(), scalars, value.stream());
    } else {
      kernels::sgd_step(value.data(), grad.data(), uses_velocity() ? state_[i].data() : nullptr,
                        value.size(), static_cast<float>(settings_.lr),
                        static_cast<float>(settings_.momentum),
                        static_cast<float>(settings_.weight_decay), value.stream());
    }
  }
}

int64_t GpuOptimizer::state_bytes() const {
  int64_t bytes = 0;
  for (const DeviceTensor& t : state_) bytes += t.bytes();
  return bytes;
}

std::unique_ptr<GpuOptimizer> make_gpu_optimizer(const OptimizerSettings& settings,
                                                 std::vector<GpuParameter> parameters) {
  return std::make_unique<GpuOptimizer>(settings, std::move(parameters));
}

}  // namespace pipelab::gpu
