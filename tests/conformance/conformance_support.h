// The backend-conformance suite: every test of tests/conformance runs once per
// registered backend ("cpu" always; "cuda" in a CUDA build), named after it,
// and skips with the backend's own reason where it cannot run (no GPU).
// What a test checks holds for every backend: the one executor loop gives
// every backend the same schedules, versions, memory accounting and run
// control, and each backend's numbers agree with the CPU reference.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/runtime/executor.h"
#include "tests/support/runtime_test_support.h"

namespace pipelab::testing {

// Every backend this build registers (registering the CUDA one when built).
std::vector<std::string> conformance_backends();

// Loss curves of another backend agree with the CPU's to this relative
// tolerance at every step (FP32; float reassociation only).
constexpr double kBackendLossTolerance = 1e-4;

class BackendConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string reason = backend_unavailable_reason(GetParam());
    if (!reason.empty()) GTEST_SKIP() << GetParam() << " backend unavailable: " << reason;
    set_backend_under_test(GetParam());
  }
  void TearDown() override { set_backend_under_test("cpu"); }
  const std::string& backend() const { return GetParam(); }
};

// A suite whose runs are held to one reference loss curve: Suite's static
// reference_experiment() trained once per suite on the CPU (the reference
// every backend answers to). check() runs an experiment on the backend
// under test and compares its curve at every step.
template <typename Suite>
class ReferenceCurveConformance : public BackendConformance {
 protected:
  static void SetUpTestSuite() {
    const RunOutput run = run_experiment(on_backend(Suite::reference_experiment(), "cpu"));
    ASSERT_EQ(run.state, RunState::Finished) << run.error;
    reference_ = new std::vector<double>(run.losses());
  }
  static void TearDownTestSuite() {
    delete reference_;
    reference_ = nullptr;
  }
  static const std::vector<double>& reference() { return *reference_; }

  void check(const Experiment& experiment, const std::string& what) const {
    const RunOutput run = run_experiment(on_backend(experiment, backend()));
    ASSERT_EQ(run.state, RunState::Finished) << what << ": " << run.error;
    expect_same_curve(*reference_, run.losses(), kBackendLossTolerance, what);
  }

 private:
  static inline std::vector<double>* reference_ = nullptr;
};

// Test names end in the backend: .../cpu, .../cuda.
inline std::string backend_test_name(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

}  // namespace pipelab::testing

// Instantiates conformance fixture `Suite` over every backend.
#define PIPELAB_CONFORMANCE_SUITE(Suite)                                               \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite,                                            \
                           ::testing::ValuesIn(::pipelab::testing::conformance_backends()), \
                           ::pipelab::testing::backend_test_name)
