// Executor: runs an experiment's lowered schedule for real and reports what
// happened through an EventSink. The CPU executor lives in core/runtime; the
// CUDA one in gpu/ registers itself with the factory below. The UI and the CLI
// only see this interface.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/io/experiment.h"
#include "core/trace/event_sink.h"

namespace pipelab {

enum class RunState {
  Ready,     // built, not started
  Running,
  Paused,    // between ops; resume() or step() continues
  Finished,  // all steps done
  Stopped,   // stop() was called
  Failed,    // error() says why (diverged, out of memory, ...)
};
const char* run_state_name(RunState state);

class Executor {
 public:
  virtual ~Executor() = default;
  virtual void start() = 0;    // returns at once; training runs on worker threads
  virtual void pause() = 0;    // workers halt between ops
  virtual void resume() = 0;
  virtual void step() = 0;     // from Ready or Paused: run one more training step, then pause
  virtual void stop() = 0;     // takes effect within one op; joins every worker
  virtual void wait() = 0;     // blocks until Finished, Stopped or Failed
  // Ends the run as Failed with `message`, as an error inside it would (another
  // process of a multi-process run failed or stopped answering).
  virtual void abort(const std::string& message) = 0;
  virtual RunState state() const = 0;
  virtual std::string error() const = 0;  // why it Failed (empty otherwise)
  virtual int steps_done() const = 0;
  virtual int steps_total() const = 0;
};

struct ProcessShare;  // process_share.h

// What a run takes from its prediction. The runtime does not simulate: the CLI
// and the app fill this with predict_run (core/cli/run_prediction.h).
struct RunPrediction {
  // The simulated bubble fraction every StepMetrics carries (NaN: none).
  double bubble = std::numeric_limits<double>::quiet_NaN();
  // Each device's predicted peak bytes, for the cpu backend's host-memory
  // pre-flight (host_memory_check.h). Empty: no pre-flight.
  std::vector<int64_t> device_peak_bytes;
};

struct ExecutorOptions {
  int steps = 0;              // 0: the experiment's training.steps
  bool start_paused = false;  // start() leaves it Paused before the first op (for step())
  // A run spread over processes: this process's devices, transport and
  // reporter (process_share.h); it must outlive the executor. Null: every
  // device runs here. The cpu backend runs such a share, and the backends
  // registered with ProcessReach::AcrossProcesses (cuda).
  const ProcessShare* process = nullptr;
  RunPrediction prediction;
};

// Builds the executor experiment.backend.type names ("cpu" or "cuda"). Loads the
// data and builds the stages before returning, so mistakes surface here: throws
// ExperimentError (bad backend, no GPU, ...) or DataError (malformed data file).
using ExecutorFactory =
    std::function<std::unique_ptr<Executor>(const Experiment&, EventSink&, const ExecutorOptions&)>;
std::unique_ptr<Executor> make_executor(const Experiment& experiment, EventSink& sink,
                                        const ExecutorOptions& options = {});

// Why a backend cannot run on this machine ("" when it can), e.g. "no CUDA
// device (...)": asked before building, so tests and menus can say why.
using BackendAvailability = std::function<std::string()>;

// Whether a backend's executors run one rank's share of a run over processes
// (ExecutorOptions::process); make_executor refuses a share to the others.
enum class ProcessReach { OneProcess, AcrossProcesses };

// gpu/ calls this once at start-up (from main) to add "cuda". Without an
// availability check the backend is taken to run everywhere.
void register_backend(const std::string& name, ExecutorFactory factory,
                      BackendAvailability unavailable_reason = {},
                      ProcessReach reach = ProcessReach::OneProcess);
// "cpu" first, then the others by name.
std::vector<std::string> registered_backends();
// "" when backend `name` can run here; otherwise why not (also for a name
// that is not registered).
std::string backend_unavailable_reason(const std::string& name);

}  // namespace pipelab
