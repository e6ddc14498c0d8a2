// Soak: many start / pause / step / stop cycles of a small CPU run, with
// resident memory flat and every thread joined. The default test run (and so
// CI, under the sanitizers too) does a short soak of 200 cycles; the long one
// is DISABLED_ (not in the default ctest run); run it with
//   test_runtime --gtest_also_run_disabled_tests --gtest_filter='RunSoak.*'
// PIPELAB_SOAK_CYCLES sets the long soak's number of cycles (default 1000).
//
// Criterion: after a warm-up of 50 cycles (allocator pools, BLAS buffers and
// the heap reach their working size), resident memory may grow by at most
// 4 MiB over the remaining cycles: a leak of one 4 KiB page per cycle would
// already exceed it at 1,000 cycles. After every cycle the thread count is
// what it was before the first. Under AddressSanitizer or ThreadSanitizer
// resident memory grows by design (quarantine, shadow memory), so there the
// soak checks threads and lets the sanitizer look for leaks and races.
// glibc's malloc opens a new arena for a thread that finds the others busy,
// up to 8 per core, so how many the workers' threads end up with depends on
// how they were scheduled: on a loaded machine a late one added more than
// the slack. The soak caps them at two, so the growth measures leaks alone.
#include <gtest/gtest.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "tests/support/runtime_test_support.h"

namespace pipelab {
namespace {

// GCC says so with __SANITIZE_*__, clang with __has_feature.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PIPELAB_SOAK_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(PIPELAB_SOAK_SANITIZED)
constexpr bool kResidentMemoryIsOurs = false;
#else
constexpr bool kResidentMemoryIsOurs = true;
#endif

constexpr int kWarmUpCycles = 50;
constexpr int64_t kResidentSlackBytes = int64_t{4} << 20;

constexpr int kShortSoakCycles = 200;

int long_soak_cycles() {
  const char* text = std::getenv("PIPELAB_SOAK_CYCLES");
  const int cycles = text ? std::atoi(text) : 1000;
  return cycles > kWarmUpCycles ? cycles : kWarmUpCycles + 1;
}

double mebibytes(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// One cycle: start, run a step, pause, step once more, stop, destroy.
void start_pause_step_stop(const Experiment& experiment) {
  EventSink sink;
  ExecutorOptions options;
  options.steps = 1000000;  // never finishes on its own
  std::unique_ptr<Executor> executor = make_executor(experiment, sink, options);
  executor->start();
  while (executor->steps_done() < 1 && executor->state() == RunState::Running)
    std::this_thread::yield();
  executor->pause();
  testing::wait_for_pause(*executor);
  ASSERT_EQ(executor->state(), RunState::Paused)
      << run_state_name(executor->state()) << " after pause, " << executor->steps_done()
      << " steps done; " << executor->error();
  const int paused_at = executor->steps_done();
  executor->step();
  // The step runs on the workers' threads: wait for it to be counted and
  // the run to pause again (a state read right after step() may still be
  // the pause before it).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((executor->steps_done() != paused_at + 1 || executor->state() != RunState::Paused) &&
         executor->steps_done() <= paused_at + 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  ASSERT_EQ(executor->steps_done(), paused_at + 1)
      << run_state_name(executor->state()) << " after step";
  ASSERT_EQ(executor->state(), RunState::Paused) << executor->error();
  executor->stop();
  ASSERT_EQ(executor->state(), RunState::Stopped) << executor->error();
  sink.drain();
}

void soak(int cycles) {
#if defined(__GLIBC__)
  mallopt(M_ARENA_MAX, 2);
#endif
  // dp 2 x pp 2: sends, receives and a data-parallel all-reduce on 4 threads.
  const Experiment experiment =
      testing::with_plan(testing::small_experiment(), ScheduleKind::OneFOneB, 2, 4, 2);
  testing::run_experiment(experiment);  // BLAS's threads exist from here on
  const int threads_before = testing::process_threads();
  const int64_t resident_start = testing::resident_bytes();
  const auto began = std::chrono::steady_clock::now();

  int64_t resident_warm = 0;
  int64_t resident_peak = 0;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    start_pause_step_stop(experiment);
    if (::testing::Test::HasFatalFailure()) FAIL() << "cycle " << cycle;
    ASSERT_EQ(testing::process_threads_settled(threads_before), threads_before)
        << "a thread outlived cycle " << cycle;
    const int64_t resident = testing::resident_bytes();
    if (cycle + 1 == kWarmUpCycles) resident_warm = resident;
    if (cycle + 1 >= kWarmUpCycles) resident_peak = std::max(resident_peak, resident);
  }
  const int64_t resident_end = testing::resident_bytes();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::printf(
      "soak: %d cycles in %.1f s; resident %.1f MiB at start, %.1f MiB after %d warm-up cycles, "
      "%.1f MiB at the end (peak %.1f MiB); threads %d before, %d after\n",
      cycles, seconds, mebibytes(resident_start), mebibytes(resident_warm), kWarmUpCycles,
      mebibytes(resident_end), mebibytes(resident_peak), threads_before,
      testing::process_threads());
  if (kResidentMemoryIsOurs) {
    EXPECT_LE(resident_end - resident_warm, kResidentSlackBytes);
    EXPECT_LE(resident_peak - resident_warm, kResidentSlackBytes);
  }
}

TEST(RunSoak, TwoHundredStartPauseStepStopCyclesKeepMemoryFlatAndJoinEveryThread) {
  soak(kShortSoakCycles);
}

TEST(RunSoak, DISABLED_StartPauseStepStopCyclesKeepMemoryFlatAndJoinEveryThread) {
  soak(long_soak_cycles());
}

}  // namespace
}  // namespace pipelab
