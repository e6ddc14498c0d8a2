#include "core/runtime/parameter_server.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

std::vector<Tensor> copy_values(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> copies;
  copies.reserve(tensors.size());
  for (const Tensor& tensor : tensors)
    copies.push_back(tensor.clone(nullptr, MemoryCategory::Weights));
  return copies;
}

// Every tensor's values, in order, as one row.
std::vector<float> row_of(const std::vector<Tensor>& tensors) {
  std::vector<float> row;
  for (const Tensor& tensor : tensors)
    row.insert(row.end(), tensor.data(), tensor.data() + tensor.size());
  return row;
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

void ParameterServer::push(int step, int replica, int /*device*/,
                           const std::vector<Parameter>& gradients) {
  assert(gradients.size() == gradients_.size());
  std::vector<Tensor> copy;
  copy.reserve(gradients.size());
  for (const Parameter& parameter : gradients)
    copy.push_back(parameter.grad->clone(nullptr, MemoryCategory::Gradients));
  std::lock_guard<std::mutex> lock(mutex_);
  store_push_locked(step, replica, std::move(copy));
}

void ParameterServer::push_row(int step, int replica, const float* values, int64_t count) {
  int64_t expected = 0;
  for (const Tensor& gradient : gradients_) expected += gradient.size();
  if (count != expected)
    throw std::runtime_error("a parameter-server push of " + std::to_string(count) +
                             " values for a stage of " + std::to_string(expected));
  std::vector<Tensor> copy;
  copy.reserve(gradients_.size());
  for (const Tensor& gradient : gradients_) {
    Tensor& part =
        copy.emplace_back(gradient.rows(), gradient.cols(), nullptr, MemoryCategory::Gradients);
    std::copy(values, values + part.size(), part.data());
    values += part.size();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  store_push_locked(step, replica, std::move(copy));
}

void ParameterServer::store_push_locked(int step, int replica, std::vector<Tensor> gradients) {
  // Only a message from another process can break these: say so rather than sum wrong.
  const auto refuse = [&] {
    throw std::runtime_error("replica " + std::to_string(replica) + " pushed step " +
                             std::to_string(step) + " twice or after it was applied");
  };
  if (step < next_step_ || replica < 0 || replica >= replicas_) refuse();
  PushedStep& pushed = pushed_[step];
  pushed.by_replica.resize(replicas_);
  if (!pushed.by_replica[replica].empty()) refuse();
  ++pushed.count;
  pushed.by_replica[replica] = std::move(gradients);
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
  if (!made) return;
  version_made_.notify_all();
  answer_waiting_rows_locked();
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
  note_pulled_locked(version, replica);
}

void ParameterServer::pull_row(int version, int replica, RowAnswer answer) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (replica < 0 || replica >= replicas_ || version < last_pulled_[replica])
    throw std::runtime_error("replica " + std::to_string(replica) + " asked for weight version " +
                             std::to_string(version) + ", older than one it pulled");
  waiting_rows_.emplace(version, WaitingRow{replica, std::move(answer)});
  answer_waiting_rows_locked();
}

void ParameterServer::answer_waiting_rows_locked() {
  while (!waiting_rows_.empty() && waiting_rows_.begin()->first <= next_step_) {
    const auto first = waiting_rows_.begin();
    const int version = first->first;
    const WaitingRow waiting = std::move(first->second);
    waiting_rows_.erase(first);
    waiting.answer(row_of(versions_.at(version)));
    note_pulled_locked(version, waiting.replica);
  }
}

void ParameterServer::note_pulled_locked(int version, int replica) {
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
