// Helpers shared by the runtime tests and the backend-conformance suite
// (tests/conformance): small experiments that train in milliseconds, and
// running one to the end while collecting its event stream.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/io/experiment.h"
#include "core/runtime/executor.h"
#include "core/trace/event_sink.h"

namespace pipelab::testing {

// 2-16-16-16-3 MLP (relu) on 3 noisy Gaussian blobs (600 samples, 480 train),
// batch 32, 20 steps of SGD with momentum, one device, FP32, on the backend
// under test ("cpu" unless a conformance test set another).
Experiment small_experiment();

// small_experiment's blobs as 2 x 3 x 3 images through conv2d, batch norm,
// relu, a residual block that widens and halves the image, a global average
// pool and the classifier; `sync`: the batch norms' statistics are synced
// over data-parallel replicas.
Experiment small_conv_experiment(bool sync);
// A conv net with a convolution past its first layer: conv, relu, conv,
// global average pool, linear classifier (as small_conv_experiment's data).
Experiment two_convolution_experiment();

// A tiny GPT (embedding 16 x 16, two blocks of 2 heads, layernorm, linear to
// the vocabulary) on the copy task (sequences of 8 tokens, vocabulary 16, 512
// samples), batch 16, 20 steps of Adam, one device on the cpu backend.
Experiment tiny_gpt_experiment();

// A moe layer of `experts` experts with 16-wide MLPs.
LayerSpec moe_spec(int64_t experts, int64_t top_k, double capacity_factor);
// tiny_gpt_experiment with every block's MLP a mixture of 4 experts (32 wide).
Experiment gpt_with_expert_blocks(int64_t top_k, double capacity_factor);
// small_experiment's MLP with a moe layer of 4 experts between its linears
// (linear 16, relu, moe, linear 3), on blobs apart enough (noise 0.3) that
// the loss falls far in 20 steps.
Experiment small_moe_experiment(int64_t top_k, double capacity_factor);

// The backend small_experiment() runs on (the conformance fixture sets it).
void set_backend_under_test(const std::string& backend);
const std::string& backend_under_test();

// The same experiment on another backend.
Experiment on_backend(Experiment experiment, const std::string& backend);

// The same experiment with a parallel plan.
Experiment with_plan(Experiment experiment, ScheduleKind schedule, int pp, int microbatches,
                     int dp = 1, int tp = 1, int chunks = 1);

struct RunOutput {
  RunState state = RunState::Ready;
  std::string error;
  Trace trace;  // measured events, memory samples and step metrics
  std::vector<std::string> messages;
  std::vector<double> losses() const;  // per step
};

// Builds, starts and waits for the run; drains everything it reported.
RunOutput run_experiment(const Experiment& experiment, const ExecutorOptions& options = {});
// run_experiment's loss curve, expecting the run to finish (`what` names it in a failure).
std::vector<double> losses_of(const Experiment& experiment, const std::string& what);

// Polls until the executor reports Paused, or has ended (Finished, Stopped,
// Failed); fails the test after 10 s.
void wait_for_pause(const Executor& executor);

// Drains `sink` into `output`.
void drain_into(EventSink& sink, RunOutput& output);

// Bytes of one copy of each pipeline stage's parameters (params x 4): its
// weights, and as much again for gradients and for momentum.
std::vector<int64_t> stage_parameter_bytes(const Experiment& experiment);

// The threads this process has now (entries of /proc/self/task).
int process_threads();
// The thread count once it is back to `expected`, or after 1 s what it is then:
// a joined thread's /proc entry can outlive the join by a moment.
int process_threads_settled(int expected);
// Its resident memory in bytes (/proc/self/statm).
int64_t resident_bytes();

// Step by step, |actual - expected| <= rtol * max(1, |expected|).
void expect_same_curve(const std::vector<double>& expected, const std::vector<double>& actual,
                       double rtol, const std::string& what);

}  // namespace pipelab::testing
