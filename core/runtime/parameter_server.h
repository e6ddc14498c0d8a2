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
//
// In a run over processes the server lives on the rank that runs its stage
// shard's replica 0; replicas on other ranks reach it through a
// RemoteParameterServer (remote_parameter_server.h), which arrives here as
// push_row and pull_row, with the same versions and sums.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/nn/optimizer.h"
#include "core/comm/run_control.h"

namespace pipelab {

// What a replica's Push and Pull ops talk to (DeviceWorker::server_of): its
// stage shard's ParameterServer, or one another process holds.
class WeightServer {
 public:
  virtual ~WeightServer() = default;
  // Replica `replica`'s gradient of global step `step` (the .grad tensors),
  // from worker `device`.
  virtual void push(int step, int replica, int device, const std::vector<Parameter>& gradients) = 0;
  // Copies version `version` into the .value tensors, waiting for it (as
  // worker `device` of the run). Throws RunStopped when the run stops first.
  virtual void pull(int version, int replica, int device,
                    const std::vector<Parameter>& weights) = 0;
};

class ParameterServer final : public WeightServer {
 public:
  // Starts from a copy of `initial` (version 0). Registers a stop wake-up.
  ParameterServer(const std::vector<Parameter>& initial, const OptimizerSettings& optimizer,
                  int replicas, RunControl& control);
  ParameterServer(const ParameterServer&) = delete;
  ParameterServer& operator=(const ParameterServer&) = delete;

  void push(int step, int replica, int device, const std::vector<Parameter>& gradients) override;
  void pull(int version, int replica, int device, const std::vector<Parameter>& weights) override;

  // A replica in another process: its gradients of `step` as one row of
  // `count` floats, every parameter's in order. Throws std::runtime_error
  // when the count is not the stage's.
  void push_row(int step, int replica, const float* values, int64_t count);
  // A replica in another process asks for version `version`: `answer` gets it
  // as one row as soon as it exists, at once or from the push that makes it.
  // Never waits. `answer` runs under the server's lock, so it must not call
  // the server.
  using RowAnswer = std::function<void(const std::vector<float>& weights)>;
  void pull_row(int version, int replica, RowAnswer answer);

  int newest_version() const;

 private:
  void store_push_locked(int step, int replica, std::vector<Tensor> gradients);
  void apply_ready_steps_locked();
  void answer_waiting_rows_locked();
  void note_pulled_locked(int version, int replica);
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
  struct WaitingRow {
    int replica = 0;
    RowAnswer answer;
  };
  std::multimap<int, WaitingRow> waiting_rows_;  // pull_row's not answered yet, by version
};

}  // namespace pipelab
