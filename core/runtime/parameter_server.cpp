#include "core/runtime/parameter_server.h"

#include <algorithm>
#include <cassert>

namespace pipelab {
namespace {

std::vector<Tensor> copy_values(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> copies;
  copies.reserve(tensors.size());
  for (const Tensor& tensor : tensors)
    copies.push_back(tensor.clone(nullptr, MemoryCategory::Weights));
  return copies;
}

}  // namespace

ParameterServer::ParameterServer(const std::vector<Parameter>& initial,
                                 const OptimizerSettings& optimizer, int replicas,
                                 RunControl& control)
    : replicas_(replicas), control_(control), last_pulled_(replicas, 0) {
  for (const Parameter& parameter : initial) {
    weights_.push_back(parameter.value->clone(nullptr, MemoryCategory::Weights));
    gradients_.emplace_back(parameter.value->rows(), parameter.value->cols());
  }
  std::vector<Parameter> own;
  for (size_t i = 0; i < weights_.size(); ++i) own.push_back({&weights_[i], &gradients_[i]});
  optimizer_ = make_optimizer(optimizer, own);
  versions_[0] = copy_values(weights_);
  control_.add_stop_listener([this] {
    std::lock_guard<std::mutex> lock(mutex_);
    version_made_.notify_all();
  });
}

void ParameterServer::push(int step, int replica, const std::vector<Parameter>& gradients) {
  assert(gradients.size() == gradients_.size());
  std::vector<Tensor> copy;
  copy.reserve(gradients.size());
  for (const Parameter& parameter : gradients)
    copy.push_back(parameter.grad->clone(nullptr, MemoryCategory::Gradients));
  std::lock_guard<std::mutex> lock(mutex_);
  assert(step >= next_step_);
  PushedStep& pushed = pushed_[step];
  pushed.by_replica.resize(replicas_);
  ++pushed.count;
  pushed.by_replica[replica] = std::move(copy);
  apply_ready_steps_locked();
}

void ParameterServer::apply_ready_steps_locked() {
  bool made = false;
  while (true) {
    const auto found = pushed_.find(next_step_);
    if (found == pushed_.end()) break;
    if (found->second.count < replicas_) break;
    const auto& slots = found->second.by_replica;
    for (size_t i = 0; i < gradients_.size(); ++i) {
      gradients_[i].copy_from(slots[0][i]);
      for (int r = 1; r < replicas_; ++r) gradients_[i].add(slots[r][i]);
    }
    optimizer_->step();
    pushed_.erase(found);
    ++next_step_;
    versions_[next_step_] = copy_values(weights_);
    made = true;
  }
  if (made) version_made_.notify_all();
}

void ParameterServer::pull(int version, int replica, int device,
                           const std::vector<Parameter>& weights) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (next_step_ < version) {
    RunControl::IdleScope idle(control_, device);
    version_made_.wait(lock, [&] { return next_step_ >= version || control_.stopping(); });
  }
  if (next_step_ < version) throw RunStopped{};
  const std::vector<Tensor>& stored = versions_.at(version);
  assert(stored.size() == weights.size());
  for (size_t i = 0; i < weights.size(); ++i) weights[i].value->copy_from(stored[i]);
  last_pulled_[replica] = std::max(last_pulled_[replica], version);
  forget_old_versions_locked();
}

void ParameterServer::forget_old_versions_locked() {
  const int oldest_needed = *std::min_element(last_pulled_.begin(), last_pulled_.end());
  while (!versions_.empty() && versions_.begin()->first < oldest_needed)
    versions_.erase(versions_.begin());
}

int ParameterServer::newest_version() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_step_;
}

}  // namespace pipelab
