#include "core/nn/optimizer.h"

#include <cassert>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/nn/fast_math.h"

namespace pipelab {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

void check_settings(const OptimizerSettings& s) {
  require(s.lr >= 0, "optimizer.lr must be >= 0, got " + std::to_string(s.lr));
  require(s.momentum >= 0, "optimizer.momentum must be >= 0, got " + std::to_string(s.momentum));
  require(s.beta1 >= 0 && s.beta1 < 1,
          "optimizer.beta1 must be in [0, 1), got " + std::to_string(s.beta1));
  require(s.beta2 >= 0 && s.beta2 < 1,
          "optimizer.beta2 must be in [0, 1), got " + std::to_string(s.beta2));
  require(s.eps > 0, "optimizer.eps must be > 0, got " + std::to_string(s.eps));
  require(s.weight_decay >= 0,
          "optimizer.weight_decay must be >= 0, got " + std::to_string(s.weight_decay));
}

}  // namespace

const char* optimizer_type_name(OptimizerType type) {
  switch (type) {
    case OptimizerType::Sgd:
      return "sgd";
    case OptimizerType::Adam:
      return "adam";
    case OptimizerType::AdamW:
      return "adamw";
  }
  return "?";
}

std::optional<OptimizerType> parse_optimizer_type(const std::string& name) {
  for (OptimizerType type : {OptimizerType::Sgd, OptimizerType::Adam, OptimizerType::AdamW})
    if (name == optimizer_type_name(type)) return type;
  return std::nullopt;
}

Optimizer::Optimizer(const OptimizerSettings& settings, std::vector<Parameter> parameters,
                     MemoryCategory state_category)
    : settings_(settings), state_category_(state_category), parameters_(std::move(parameters)) {
  check_settings(settings_);
  for (const Parameter& p : parameters_) {
    assert(p.value && p.grad && p.value->same_shape(*p.grad));
    (void)p;
  }
}

void Optimizer::step() {
  ++steps_taken_;
  for (size_t i = 0; i < parameters_.size(); ++i) update(i, steps_taken_);
}

int64_t Optimizer::state_bytes() const {
  int64_t bytes = 0;
  for (const Tensor& t : state_) bytes += t.bytes();
  return bytes;
}

Tensor Optimizer::make_state(size_t i) const {
  const Tensor& value = *parameters_[i].value;
  return Tensor(value.rows(), value.cols(), value.allocator(), state_category_);
}

SgdOptimizer::SgdOptimizer(const OptimizerSettings& settings, std::vector<Parameter> parameters,
                           MemoryCategory state_category)
    : Optimizer(settings, std::move(parameters), state_category) {
  if (settings_.momentum > 0)
    for (size_t i = 0; i < parameters_.size(); ++i) state_.push_back(make_state(i));  // velocity
}

void SgdOptimizer::update(size_t i, int64_t) {
  // Parameters, gradients and state never share storage (__restrict__ lets
  // the loops vectorise).
  float* __restrict__ p = parameters_[i].value->data();
  const float* __restrict__ g = parameters_[i].grad->data();
  const int64_t n = parameters_[i].value->size();
  const float lr = static_cast<float>(settings_.lr);
  const float wd = static_cast<float>(settings_.weight_decay);
  if (settings_.momentum > 0) {
    float* __restrict__ v = state_[i].data();
    const float momentum = static_cast<float>(settings_.momentum);
    for (int64_t k = 0; k < n; ++k) {
      v[k] = momentum * v[k] + (g[k] + wd * p[k]);
      p[k] -= lr * v[k];
    }
  } else {
    for (int64_t k = 0; k < n; ++k) p[k] -= lr * (g[k] + wd * p[k]);
  }
}

AdamOptimizer::AdamOptimizer(const OptimizerSettings& settings, std::vector<Parameter> parameters,
                             MemoryCategory state_category)
    : Optimizer(settings, std::move(parameters), state_category) {
  for (size_t i = 0; i < parameters_.size(); ++i) {
    state_.push_back(make_state(i));  // first moment m, at 2i
    state_.push_back(make_state(i));  // second moment v, at 2i + 1
  }
}

namespace {

// Adam's elementwise step over n parameters (PyTorch's formula). A free
// function so it can be compiled for AVX2 too; its file builds with
// -fno-math-errno (core/CMakeLists.txt), without which GCC keeps sqrt scalar.
PIPELAB_VECTOR_CLONES
void adam_step(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m,
               float* __restrict__ v, int64_t n, float beta1, float beta2, float eps,
               float step_size, float correction2_sqrt, float coupled_decay, float decay_factor) {
  for (int64_t k = 0; k < n; ++k) {
    const float grad = g[k] + coupled_decay * p[k];
    p[k] *= decay_factor;
    m[k] = beta1 * m[k] + (1.0f - beta1) * grad;
    v[k] = beta2 * v[k] + (1.0f - beta2) * grad * grad;
    const float denom = std::sqrt(v[k]) / correction2_sqrt + eps;
    p[k] -= step_size * m[k] / denom;
  }
}

}  // namespace

void AdamOptimizer::update(size_t i, int64_t step) {
  float* p = parameters_[i].value->data();
  const float* g = parameters_[i].grad->data();
  float* m = state_[2 * i].data();
  float* v = state_[2 * i + 1].data();
  const int64_t n = parameters_[i].value->size();
  const bool decoupled = settings_.type == OptimizerType::AdamW;
  const double t = static_cast<double>(step);
  // Scalars in double, as PyTorch computes them on the host.
  const float step_size = static_cast<float>(settings_.lr / (1.0 - std::pow(settings_.beta1, t)));
  const float correction2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(settings_.beta2, t)));
  const float beta1 = static_cast<float>(settings_.beta1);
  const float beta2 = static_cast<float>(settings_.beta2);
  const float eps = static_cast<float>(settings_.eps);
  const float coupled_decay = decoupled ? 0.0f : static_cast<float>(settings_.weight_decay);
  const float decay_factor =
      decoupled ? static_cast<float>(1.0 - settings_.lr * settings_.weight_decay) : 1.0f;
  adam_step(p, g, m, v, n, beta1, beta2, eps, step_size, correction2_sqrt, coupled_decay, decay_factor);
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerSettings& settings,
                                          std::vector<Parameter> parameters, MemoryCategory state_category) {
  if (settings.type == OptimizerType::Sgd)
    return std::make_unique<SgdOptimizer>(settings, std::move(parameters), state_category);
  return std::make_unique<AdamOptimizer>(settings, std::move(parameters), state_category);
}

}  // namespace pipelab
