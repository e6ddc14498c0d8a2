// A stop that lands while an op of each kind the CPU backend runs is under
// way: the run ends Stopped, no thread is left, and every device's memory is
// back to its weights, gradients and optimizer state (then to nothing once the
// executor is gone). And a fault in an op of each kind: the run ends Failed,
// the message names the device and the op, and the other devices stop (none
// is left waiting for the failed one).
//
// A probe backend (the CPU backend whose begin, send and receive hold the
// chosen op until the run stops) puts the stop inside that op for certain: the
// op's body then runs with the stop flag set, so a collective or receive inside
// it unwinds through RunStopped from the middle of the op (a tensor-parallel
// all-reduce from inside a forward).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/nn/blas_threads.h"
#include "core/runtime/cpu_backend.h"
#include "core/runtime/device_worker_impl.h"
#include "core/runtime/pipeline_executor.h"
#include "tests/support/runtime_test_support.h"

namespace pipelab {
namespace {

using testing::small_experiment;
using testing::with_plan;

// The op to hold: the first of `kind` (of `group`, for an all-reduce) in `step`.
struct ProbeTarget {
  OpKind kind = OpKind::Forward;
  CommGroup group = CommGroup::None;
  int step = 1;  // after the first update: optimizer state and versions exist
  bool fault = false;  // throw from the op instead of holding it
  std::atomic<bool> began{false};
};

struct ProbeDevices : CpuDevices {
  explicit ProbeDevices(ProbeTarget& target) : target(target) {}
  ProbeTarget& target;
};

class ProbeBackend : public CpuBackend {
 public:
  using Devices = ProbeDevices;

  ProbeBackend(ProbeDevices& devices, WorkerShared& shared, const WorkerPlace& place)
      : CpuBackend(devices, shared, place), target_(devices.target), control_(shared.control) {}

  // The loop calls these by name on its Backend type, so they stand in for
  // CpuBackend's (whose send and receive call its own begin).
  void begin(const Op& op) {
    CpuBackend::begin(op);
    hold_if_target(op);
  }
  int64_t send(const Op& op, const MessageTag& tag, Tensor message) {
    hold_if_target(op);
    return CpuBackend::send(op, tag, std::move(message));
  }
  Tensor receive(const Op& op, const MessageTag& tag) {
    hold_if_target(op);
    return CpuBackend::receive(op, tag);
  }

 private:
  void hold_if_target(const Op& op) {
    if (op.kind != target_.kind || op.step != target_.step) return;
    if (op.kind == OpKind::AllReduce && op.group != target_.group) return;
    if (target_.began.exchange(true)) return;  // only the first one
    if (target_.fault) throw std::runtime_error("injected fault");
    while (!control_.stopping()) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }

  ProbeTarget& target_;
  const RunControl& control_;
};

// CpuExecutor's devices, on the probe backend.
class ProbeExecutor : public PipelineExecutor<ProbeBackend> {
 public:
  ProbeExecutor(const Experiment& experiment, EventSink& sink, ProbeTarget& target)
      : PipelineExecutor(experiment, sink, {}) {
    set_blas_threads(1);
    prepare_run();
    auto devices = std::make_unique<ProbeDevices>(target);
    for (int d = 0; d < device_count(); ++d) {
      devices->allocators.push_back(std::make_unique<DeviceAllocator>(d));
      devices->allocators.back()->set_listener([this, d](const MemoryBytes& bytes) {
        sink_.add_memory({d, clock_.now(), bytes});
      });
    }
    for (int d = 0; d < device_count(); ++d)
      devices->mailboxes.push_back(
          std::make_unique<Mailbox>(d, *devices->allocators[d], *control_));
    devices->connect();
    devices_ = std::move(devices);
    build_workers();
  }
  ~ProbeExecutor() override { stop_and_join(); }

  const DeviceAllocator& allocator(int device) const { return *devices_->allocators[device]; }

 private:
  std::string launch_message() const override { return "probe run"; }
};

int64_t category(const MemoryBytes& bytes, MemoryCategory which) {
  return bytes[static_cast<int>(which)];
}

struct StopCase {
  std::string name;
  OpKind kind;
  CommGroup group;
  Experiment experiment;
};

std::vector<StopCase> stop_cases() {
  const Experiment base = small_experiment();
  const Experiment pipeline = with_plan(base, ScheduleKind::OneFOneB, 2, 4);
  const Experiment zero_bubble = with_plan(base, ScheduleKind::ZeroBubbleH1, 2, 4);
  Experiment recompute = pipeline;
  recompute.parallel.recompute = true;
  const Experiment data_parallel = with_plan(base, ScheduleKind::OneFOneB, 2, 2, 2);
  const Experiment tensor_parallel = with_plan(base, ScheduleKind::OneFOneB, 1, 2, 1, 2);
  Experiment async_data_parallel = data_parallel;
  async_data_parallel.parallel.update = UpdateMode::Async;
  async_data_parallel.parallel.staleness = 1;
  Experiment offload = pipeline;
  offload.parallel.offload = OffloadMode::Activations;
  return {
      {"F", OpKind::Forward, CommGroup::None, pipeline},
      {"B", OpKind::Backward, CommGroup::None, pipeline},
      {"BI", OpKind::BackwardInput, CommGroup::None, zero_bubble},
      {"BW", OpKind::BackwardWeight, CommGroup::None, zero_bubble},
      {"U", OpKind::Update, CommGroup::None, pipeline},
      {"SendActivation", OpKind::SendActivation, CommGroup::None, pipeline},
      {"RecvActivation", OpKind::RecvActivation, CommGroup::None, pipeline},
      {"SendGradient", OpKind::SendGradient, CommGroup::None, pipeline},
      {"RecvGradient", OpKind::RecvGradient, CommGroup::None, pipeline},
      {"AllReduceDataParallel", OpKind::AllReduce, CommGroup::DataParallel, data_parallel},
      {"AllReduceTensorParallel", OpKind::AllReduce, CommGroup::TensorParallel, tensor_parallel},
      {"PushGradient", OpKind::PushGradient, CommGroup::None, async_data_parallel},
      {"PullWeights", OpKind::PullWeights, CommGroup::None, async_data_parallel},
      {"Recompute", OpKind::Recompute, CommGroup::None, recompute},
      {"Offload", OpKind::Offload, CommGroup::None, offload},
      {"Reload", OpKind::Reload, CommGroup::None, offload},
  };
}

// Test names and messages show the case's name, not its bytes.
void PrintTo(const StopCase& stop_case, std::ostream* out) { *out << stop_case.name; }

class StopDuringOp : public ::testing::TestWithParam<StopCase> {};

TEST_P(StopDuringOp, EndsStoppedWithNoThreadOrInFlightMemoryLeft) {
  const StopCase& stop_case = GetParam();
  testing::run_experiment(stop_case.experiment);  // warm-up: BLAS's threads exist now
  const int threads_before = testing::process_threads();
  EventSink sink;
  ProbeTarget target;
  target.kind = stop_case.kind;
  target.group = stop_case.group;
  {
    ProbeExecutor executor(stop_case.experiment, sink, target);
    // What the devices hold before the first op (weights, gradients; momentum
    // once the first update has made it).
    std::vector<MemoryBytes> built;
    for (int d = 0; d < executor.device_count(); ++d)
      built.push_back(executor.allocator(d).current());
    executor.start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!target.began && executor.state() == RunState::Running &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    ASSERT_TRUE(target.began) << "no " << op_kind_name(stop_case.kind) << " op began in step "
                              << target.step << "; the run is " << run_state_name(executor.state());
    executor.stop();
    EXPECT_EQ(executor.state(), RunState::Stopped);
    EXPECT_EQ(executor.error(), "");

    for (int d = 0; d < executor.device_count(); ++d) {
      const MemoryBytes now = executor.allocator(d).current();
      for (MemoryCategory in_flight : {MemoryCategory::Activations, MemoryCategory::CommBuffers,
                                       MemoryCategory::StashedWeights, MemoryCategory::Workspace})
        EXPECT_EQ(category(now, in_flight), 0)
            << "device " << d << ", " << memory_category_name(in_flight);
      for (MemoryCategory kept : {MemoryCategory::Weights, MemoryCategory::Gradients})
        EXPECT_EQ(category(now, kept), category(built[d], kept))
            << "device " << d << ", " << memory_category_name(kept);
    }
  }
  EXPECT_EQ(testing::process_threads_settled(threads_before), threads_before);
  // Gone: the last memory sample of every device is zero.
  testing::RunOutput output;
  testing::drain_into(sink, output);
  std::map<int, int64_t> last_total;
  for (const MemorySample& sample : output.trace.memory)
    last_total[sample.device] = total_bytes(sample.bytes);
  for (const auto& [device, total] : last_total) EXPECT_EQ(total, 0) << "device " << device;
}

INSTANTIATE_TEST_SUITE_P(EveryOpKind, StopDuringOp, ::testing::ValuesIn(stop_cases()),
                         [](const ::testing::TestParamInfo<StopCase>& info) {
                           return info.param.name;
                         });

class FaultDuringOp : public ::testing::TestWithParam<StopCase> {};

TEST_P(FaultDuringOp, FailsNamingTheDeviceAndTheOpAndStopsTheOthers) {
  const StopCase& fault_case = GetParam();
  testing::run_experiment(fault_case.experiment);  // warm-up: BLAS's threads exist now
  const int threads_before = testing::process_threads();
  EventSink sink;
  ProbeTarget target;
  target.kind = fault_case.kind;
  target.group = fault_case.group;
  target.fault = true;
  {
    ProbeExecutor executor(fault_case.experiment, sink, target);
    const auto start = std::chrono::steady_clock::now();
    executor.start();
    executor.wait();  // returns only once every worker has ended: nobody hangs
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    ASSERT_EQ(executor.state(), RunState::Failed);
    const std::string error = executor.error();
    EXPECT_EQ(error.rfind("device ", 0), 0u) << error;
    EXPECT_NE(error.find("injected fault"), std::string::npos) << error;
    // A tensor-parallel all-reduce runs inside the forward or backward that needs it.
    const std::string running = fault_case.group == CommGroup::TensorParallel
                                    ? std::string()
                                    : op_kind_name(fault_case.kind);
    EXPECT_NE(error.find("(during " + running), std::string::npos) << error;
  }
  EXPECT_EQ(testing::process_threads_settled(threads_before), threads_before);
}

INSTANTIATE_TEST_SUITE_P(EveryOpKind, FaultDuringOp, ::testing::ValuesIn(stop_cases()),
                         [](const ::testing::TestParamInfo<StopCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace pipelab
