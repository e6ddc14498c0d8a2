// Two executors in one process, each running half of a run's devices as two
// ranks would (ProcessShare), tied by a loopback in place of MPI: what core/mpi
// adds is only the wire, so this checks the split itself, in the sanitizer
// builds too (which have no MPI).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <set>

#include "core/io/experiment_io.h"
#include "core/comm/clock_offset.h"
#include "core/runtime/cpu_executor.h"
#include "core/runtime/process_share.h"
#include "tests/support/runtime_test_support.h"

namespace pipelab {
namespace {

using testing::RunOutput;

// Reaches both halves' mailboxes, as MpiTransport reaches another rank's.
struct Loopback {
  std::array<InProcessTransport*, 2> halves{};
};

class LoopbackTransport final : public Transport {
 public:
  LoopbackTransport(Loopback& loopback, int devices_per_half)
      : loopback_(loopback), per_half_(devices_per_half) {}
  using Transport::post;
  void post(int to, const MessageTag& tag, const float* values, int64_t rows,
            int64_t cols) override {
    loopback_.halves[static_cast<size_t>(to / per_half_)]->post(to, tag, values, rows, cols);
  }

 private:
  Loopback& loopback_;
  const int per_half_;
};

// Rank 1's reports, handed to rank 0's recorder on rank 0's clock (the
// clocks are one here: offset 0).
class ForwardToRankZero final : public RunReporter {
 public:
  void connect(CpuExecutor& rank0, const CpuExecutor& rank1) {
    rank0_ = &rank0;
    rank1_ = &rank1;
  }
  void event(const TraceEvent& event) override {
    TraceEvent moved = event;
    moved.t_begin = moved_time(event.t_begin);
    moved.t_end = moved_time(event.t_end);
    rank0_->recorder().event(moved);
  }
  void memory(const MemorySample& sample) override {
    if (!rank0_) return;  // rank 1's allocations while it is built, before the two are tied
    MemorySample moved = sample;
    moved.t = moved_time(sample.t);
    rank0_->recorder().memory(moved);
  }
  void loss(int step, int replica, int microbatch, const LossResult& result) override {
    rank0_->recorder().loss(step, replica, microbatch, result);
  }
  void expert_load(int step, int replica, int microbatch, int layer,
                   const MicrobatchRouting& routing) override {
    rank0_->recorder().expert_load(step, replica, microbatch, layer, routing);
  }
  void device_finished_step(int step) override { rank0_->recorder().device_finished_step(step); }
  void message(const std::string& text) override { rank0_->recorder().message(text); }

 private:
  double moved_time(double time) const {
    return on_reference_clock(time, rank1_->clock().origin_seconds(), {},
                              rank0_->clock().origin_seconds());
  }
  CpuExecutor* rank0_ = nullptr;
  const CpuExecutor* rank1_ = nullptr;
};

RunOutput run_in_two_halves(const Experiment& experiment) {
  const int devices = experiment.parallel.devices();
  Loopback loopback;
  ForwardToRankZero forward;
  std::array<ProcessShare, 2> shares;
  for (int rank = 0; rank < 2; ++rank) {
    shares[rank] = process_share(devices, 2, rank, 0);
    shares[rank].make_transport = [&loopback, rank, devices](InProcessTransport& local) {
      loopback.halves[static_cast<size_t>(rank)] = &local;
      return std::make_unique<LoopbackTransport>(loopback, devices / 2);
    };
  }
  shares[1].reporter = &forward;
  EventSink sink0;
  EventSink sink1;  // rank 1's launch and end messages only
  ExecutorOptions options0;
  options0.process = &shares[0];
  ExecutorOptions options1;
  options1.process = &shares[1];
  CpuExecutor rank0(experiment, sink0, options0);
  CpuExecutor rank1(experiment, sink1, options1);
  forward.connect(rank0, rank1);
  rank0.start();
  rank1.start();
  rank1.wait();
  rank0.wait();
  RunOutput output;
  output.state = rank1.state() == RunState::Failed ? RunState::Failed : rank0.state();
  output.error = rank0.error() + rank1.error();
  testing::drain_into(sink0, output);
  return output;
}

TEST(ProcessShareRun, TwoHalvesTrainAsOneProcessBitForBit) {
  const Experiment base = testing::small_experiment();
  for (const Experiment& experiment :
       {testing::with_plan(base, ScheduleKind::OneFOneB, 2, 4, 2),        // pp 2 x dp 2
        testing::with_plan(base, ScheduleKind::OneFOneB, 2, 4, 1, 2)}) {  // pp 2 x tp 2
    const RunOutput one = testing::run_experiment(experiment);
    const RunOutput halves = run_in_two_halves(experiment);
    ASSERT_EQ(halves.state, RunState::Finished) << halves.error;
    ASSERT_FALSE(one.losses().empty());
    EXPECT_EQ(halves.losses(), one.losses()) << "the same sums in the same order";
    // Rank 0 evaluates with rank 1's stages sent over.
    ASSERT_FALSE(halves.trace.steps.empty());
    EXPECT_EQ(halves.trace.steps.back().val_loss, one.trace.steps.back().val_loss);
    EXPECT_FALSE(std::isnan(halves.trace.steps.back().val_loss));
    std::set<int> devices;
    for (const TraceEvent& event : halves.trace.events) devices.insert(event.device);
    EXPECT_EQ(static_cast<int>(devices.size()), experiment.parallel.devices())
        << "every device in one stream";
  }
}

TEST(ProcessShareRun, ExpertParallelAcrossTheHalvesTrainsAsOneProcess) {
  // A moe layer of 4 experts whose ep 2 group spans both halves: the
  // all-to-alls cross between them, rank 1 reports its routing to rank 0's
  // recorder and sends its experts to rank 0 for evaluation.
  Experiment base = testing::small_experiment();
  LayerSpec moe;
  moe.type = LayerType::Moe;
  moe.experts = 4;
  moe.top_k = 2;
  moe.ffn = 16;
  base.model.layers.insert(base.model.layers.begin() + 2, moe);
  base.training.steps = 6;
  for (Experiment experiment :
       {testing::with_plan(base, ScheduleKind::OneFOneB, 1, 2, 2),     // dp 2
        testing::with_plan(base, ScheduleKind::OneFOneB, 2, 4, 2)}) {  // pp 2 x dp 2
    experiment.parallel.ep = 2;
    const RunOutput one = testing::run_experiment(experiment);
    const RunOutput halves = run_in_two_halves(experiment);
    ASSERT_EQ(one.state, RunState::Finished) << one.error;
    ASSERT_EQ(halves.state, RunState::Finished) << halves.error;
    EXPECT_EQ(halves.losses(), one.losses()) << "the aux loss of rank 1's routing included";
    ASSERT_EQ(halves.trace.steps.size(), one.trace.steps.size());
    for (size_t s = 0; s < one.trace.steps.size(); ++s) {
      ASSERT_EQ(halves.trace.steps[s].expert_load.size(), 1u);
      EXPECT_EQ(halves.trace.steps[s].expert_load[0].routed,
                one.trace.steps[s].expert_load[0].routed);
      EXPECT_EQ(halves.trace.steps[s].expert_load[0].dropped,
                one.trace.steps[s].expert_load[0].dropped);
    }
    EXPECT_EQ(halves.trace.steps.back().val_loss, one.trace.steps.back().val_loss)
        << "rank 1's experts evaluated";
    EXPECT_FALSE(std::isnan(halves.trace.steps.back().val_loss));
  }
}

// Every PULL_WEIGHTS of the run: (device, step, weight version).
std::vector<std::array<int, 3>> pulls(const RunOutput& output) {
  std::vector<std::array<int, 3>> found;
  for (const TraceEvent& event : output.trace.events)
    if (event.op.kind == OpKind::PullWeights)
      found.push_back({event.op.device, event.op.step, event.op.weight_version});
  std::sort(found.begin(), found.end());
  return found;
}

TEST(ProcessShareRun, AsyncDataParallelAcrossTheHalvesTrainsAsOneProcess) {
  // Each stage's parameter server lives with its replica 0 in half 0; the
  // replicas in half 1 push and pull through the transport. A pull gets
  // exactly the version its staleness names, and the server sums the
  // replicas in order, so even asynchronous training is the same bit for bit.
  const Experiment base = testing::small_experiment();
  for (const auto& [pp, dp, staleness] : {std::array<int, 3>{1, 4, 2}, {2, 2, 0}, {2, 2, 1}}) {
    Experiment experiment = testing::with_plan(base, ScheduleKind::OneFOneB, pp, 2, dp);
    experiment.parallel.update = UpdateMode::Async;
    experiment.parallel.staleness = staleness;
    SCOPED_TRACE("pp " + std::to_string(pp) + " x dp " + std::to_string(dp) + ", staleness " +
                 std::to_string(staleness));
    const RunOutput one = testing::run_experiment(experiment);
    const RunOutput halves = run_in_two_halves(experiment);
    ASSERT_EQ(one.state, RunState::Finished) << one.error;
    ASSERT_EQ(halves.state, RunState::Finished) << halves.error;
    ASSERT_FALSE(one.losses().empty());
    EXPECT_EQ(halves.losses(), one.losses());
    EXPECT_EQ(halves.trace.steps.back().val_loss, one.trace.steps.back().val_loss);
    const auto pulled = pulls(halves);
    EXPECT_EQ(pulled, pulls(one)) << "every replica pulled the versions it pulls in one process";
    EXPECT_EQ(static_cast<int>(pulled.size()),
              experiment.parallel.devices() * experiment.training.steps)
        << "every device pulls once a step";
  }
}

}  // namespace
}  // namespace pipelab
