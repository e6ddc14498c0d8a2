// make_executor: the one place that maps backend.type to an executor. "cpu" is
// built in; other backends (gpu/'s "cuda") add themselves with register_backend.
#include <map>
#include <mutex>
#include <set>

#include "core/io/experiment_io.h"
#include "core/runtime/cpu_executor.h"
#include "core/runtime/executor.h"
#include "core/runtime/trainable.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {
namespace {

struct BackendRegistry {
  std::mutex mutex;
  std::map<std::string, ExecutorFactory> factories;
  std::map<std::string, BackendAvailability> availability;
  std::set<std::string> across_processes;  // the backends that run a ProcessShare
};

BackendRegistry& registry() {
  static BackendRegistry instance;
  return instance;
}

}  // namespace

const char* run_state_name(RunState state) {
  switch (state) {
    case RunState::Ready:
      return "ready";
    case RunState::Running:
      return "running";
    case RunState::Paused:
      return "paused";
    case RunState::Finished:
      return "finished";
    case RunState::Stopped:
      return "stopped";
    case RunState::Failed:
      return "failed";
  }
  return "unknown";
}

void register_backend(const std::string& name, ExecutorFactory factory,
                      BackendAvailability unavailable_reason, ProcessReach reach) {
  BackendRegistry& backends = registry();
  std::lock_guard<std::mutex> lock(backends.mutex);
  backends.factories[name] = std::move(factory);
  backends.availability[name] = std::move(unavailable_reason);
  if (reach == ProcessReach::AcrossProcesses)
    backends.across_processes.insert(name);
  else
    backends.across_processes.erase(name);
}

std::string backend_unavailable_reason(const std::string& name) {
  if (name == "cpu") return "";
  BackendAvailability check;
  {
    BackendRegistry& backends = registry();
    std::lock_guard<std::mutex> lock(backends.mutex);
    if (backends.factories.count(name) == 0)
      return "backend " + quoted_excerpt(name) + " is not part of this build";
    check = backends.availability[name];
  }
  return check ? check() : "";
}

std::vector<std::string> registered_backends() {
  std::vector<std::string> names = {"cpu"};
  BackendRegistry& backends = registry();
  std::lock_guard<std::mutex> lock(backends.mutex);
  for (const auto& [name, factory] : backends.factories)
    if (name != "cpu") names.push_back(name);
  return names;
}

std::unique_ptr<Executor> make_executor(const Experiment& experiment, EventSink& sink,
                                        const ExecutorOptions& options) {
  const std::string& type = experiment.backend.type;
  if (type == "cpu") return std::make_unique<CpuExecutor>(experiment, sink, options);
  ExecutorFactory factory;
  bool across_processes = false;
  {
    BackendRegistry& backends = registry();
    std::lock_guard<std::mutex> lock(backends.mutex);
    const auto found = backends.factories.find(type);
    if (found != backends.factories.end()) factory = found->second;
    across_processes = backends.across_processes.count(type) > 0;
  }
  if (factory && options.process && !across_processes)
    throw ExperimentError(
        "backend.type = " + quoted_excerpt(type) +
        " does not run across processes yet; use backend.type = cpu (or cuda) under mpirun");
  if (factory) return factory(experiment, sink, options);
  // What no backend trains yet reads better than "no such backend".
  if (type == "cuda") check_trainable(experiment);
  if (type == "cuda")
    throw ExperimentError(
        "backend.type = cuda, but this build has no CUDA backend; use backend.type = cpu");
  std::string known;
  for (const std::string& name : registered_backends()) known += (known.empty() ? "" : ", ") + name;
  throw ExperimentError("backend.type = " + quoted_excerpt(type) + " is not a backend; registered: " + known);
}

}  // namespace pipelab
