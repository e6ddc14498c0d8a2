// PipeMare's two techniques (Yang et al., "PipeMare: Asynchronous Pipeline
// Parallel DNN Training", MLSys 2021) for one pipeline stage. Under schedule
// pipemare a stage keeps one weight version, so the backward of a micro-batch
// reads weights `delay` updates newer than its forward did.
//
//  T1, learning-rate rescheduling: the stage's k-th update (k = updates done
//  before it) uses the step size
//        alpha_k = alpha / delay^p_k,   p_k = 1 - min(k / K, 1),
//  with delay that of the backward whose gradient it applies and K the warm-up
//  length in updates: early steps are divided by the delay, and by update K the
//  step size is alpha again. A delay of 0 (the last stage) counts as 1.
//
//  T2, discrepancy correction: after each update, a running average of how the
//  weights move,
//        velocity <- gamma velocity + (1 - gamma) (w_new - w_old),
//  and a backward reads w - delay * velocity, an estimate of the weights its
//  forward read, instead of w.
//
// The velocity is one tensor per parameter, counted as OptimizerState. Neither
// step keeps a copy of the weights: the velocity takes -(1 - gamma) w_old
// before the optimizer step and +(1 - gamma) w_new after it, and the backward's
// weights are made in place and put back after it (w + delay * velocity); both
// round like one more optimizer step would, far below the changes they track.
//
// Backend-neutral: works on any parameter type whose `value` points to a tensor
// with clone(MemoryCategory), fill, add_scaled, scale and bytes (core/nn's
// Tensor, gpu/'s DeviceTensor, whose work is queued on the stage's stream).
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/trace/trace_events.h"

namespace pipelab {

// T1's step size for a stage's update `updates_done` (k), its backward `delay`
// updates after its forward, warm-up `warmup_updates` (K >= 1).
double pipemare_learning_rate(double lr, int delay, int64_t updates_done, int warmup_updates);

template <typename ParameterT>
class PipeMareVelocity {
 public:
  using TensorT = std::remove_pointer_t<decltype(ParameterT::value)>;

  PipeMareVelocity(std::vector<ParameterT> parameters, double decay)
      : parameters_(std::move(parameters)), decay_(static_cast<float>(decay)) {
    velocity_.reserve(parameters_.size());
    for (const ParameterT& parameter : parameters_) {
      velocity_.push_back(parameter.value->clone(MemoryCategory::OptimizerState));
      velocity_.back().fill(0.0f);
    }
  }
  PipeMareVelocity(const PipeMareVelocity&) = delete;
  PipeMareVelocity& operator=(const PipeMareVelocity&) = delete;

  // Around the optimizer step: velocity = gamma velocity + (1 - gamma)(w_new - w_old).
  void before_update() {
    for (size_t i = 0; i < parameters_.size(); ++i) {
      velocity_[i].scale(decay_);
      velocity_[i].add_scaled(*parameters_[i].value, -(1.0f - decay_));
    }
  }
  void after_update() {
    for (size_t i = 0; i < parameters_.size(); ++i)
      velocity_[i].add_scaled(*parameters_[i].value, 1.0f - decay_);
  }

  // w -= delay * velocity for a backward `delay` updates after its forward,
  // and w += delay * velocity after it.
  void extrapolate(int delay) { move_weights(-static_cast<float>(delay)); }
  void restore(int delay) { move_weights(static_cast<float>(delay)); }

  const std::vector<TensorT>& velocity() const { return velocity_; }
  int64_t bytes() const {
    int64_t total = 0;
    for (const TensorT& tensor : velocity_) total += tensor.bytes();
    return total;
  }

 private:
  void move_weights(float factor) {
    if (factor == 0.0f) return;
    for (size_t i = 0; i < parameters_.size(); ++i)
      parameters_[i].value->add_scaled(velocity_[i], factor);
  }

  std::vector<ParameterT> parameters_;
  float decay_ = 0.9f;
  std::vector<TensorT> velocity_;  // one per parameter
};

// Extrapolates a stage's weights for one backward (or recompute) and puts them
// back however the scope ends. A null velocity (no correction) does nothing.
template <typename ParameterT>
class ExtrapolatedWeights {
 public:
  ExtrapolatedWeights(PipeMareVelocity<ParameterT>* velocity, int delay)
      : velocity_(velocity), delay_(delay) {
    if (velocity_) velocity_->extrapolate(delay_);
  }
  ~ExtrapolatedWeights() {
    if (velocity_) velocity_->restore(delay_);
  }
  ExtrapolatedWeights(const ExtrapolatedWeights&) = delete;
  ExtrapolatedWeights& operator=(const ExtrapolatedWeights&) = delete;

 private:
  PipeMareVelocity<ParameterT>* velocity_;
  int delay_;
};

}  // namespace pipelab
