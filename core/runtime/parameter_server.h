// ParameterServer: asynchronous data parallelism for one stage shard (plan.
// update = async, dp > 1). Replicas push their gradients and pull weights
// instead of all-reducing (PushGradient / PullWeights ops).
//
// Semantics (core/schedule/lowering.h): the server applies step t once every
// replica has pushed its gradient of step t, as one optimizer step on the sum
// of the replicas' gradients (summed in replica order, so runs are repeatable).
// Version v is the weights after steps 0 .. v-1. The pull of step t returns
// exactly version max(0, t + 1 - staleness), waiting until it exists: bounded
// staleness, and with staleness 0 it is synchronous training again. Old
// versions are kept until every replica has pulled past them.
//
// The server is not one of the virtual devices, so its weights, optimizer
// state and gradient sums are not counted in any device's memory.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/nn/optimizer.h"
#include "core/runtime/run_control.h"

namespace pipelab {

class ParameterServer {
 public:
  // Starts from a copy of `initial` (version 0). Registers a stop wake-up.
  ParameterServer(const std::vector<Parameter>& initial, const OptimizerSettings& optimizer,
                  int replicas, RunControl& control);
  ParameterServer(const ParameterServer&) = delete;
  ParameterServer& operator=(const ParameterServer&) = delete;

  // Replica `replica`'s gradient of global step `step` (the .grad tensors).
  void push(int step, int replica, const std::vector<Parameter>& gradients);
  // Copies version `version` into the .value tensors, waiting for it (as
  // worker `device` of the run). Throws RunStopped when the run stops first.
  void pull(int version, int replica, int device, const std::vector<Parameter>& weights);

  int newest_version() const;

 private:
  void apply_ready_steps_locked();
  void forget_old_versions_locked();

  const int replicas_;
  RunControl& control_;
  mutable std::mutex mutex_;
  std::condition_variable version_made_;
  std::vector<Tensor> weights_;
  std::vector<Tensor> gradients_;
  std::unique_ptr<Optimizer> optimizer_;
  int next_step_ = 0;  // the next step to apply
  struct PushedStep {
    int count = 0;                                // replicas that pushed
    std::vector<std::vector<Tensor>> by_replica;  // their gradients
  };
  std::map<int, PushedStep> pushed_;             // by step
  std::map<int, std::vector<Tensor>> versions_;  // kept versions
  std::vector<int> last_pulled_;                 // per replica
};

}  // namespace pipelab
