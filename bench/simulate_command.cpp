// The whole `pipelab-cli simulate` command at scale, from start to exit, as a
// user runs it: dp 8 x pp 64 1F1B with 1024 micro-batches (~3 million ops),
// JSON out. The peer is the same plan's schedule built and simulated in this
// process (metrics only): their ratio is what the command adds around the
// simulator (argument parsing, JSON, process start and exit). Target: the
// whole command under one second.
//
// Usage: simulate_command [pipelab-cli path] (the build's by default)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/schedule/lowering.h"
#include "core/sim/simulator.h"

namespace {

using Clock = std::chrono::steady_clock;

template <typename Work>
double best_ms(int repeats, Work&& work) {
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) {
    const Clock::time_point start = Clock::now();
    work();
    best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace pipelab;
  const std::string cli = argc > 1 ? argv[1] : PIPELAB_CLI_PATH;
  const std::string command =
      cli + " simulate --schedule 1f1b --stages 64 --microbatches 1024 --dp 8 > /dev/null";
  const int repeats = 5;

  bool failed = false;
  const double whole = best_ms(repeats, [&] { failed = failed || std::system(command.c_str()) != 0; });
  if (failed) {
    std::fprintf(stderr, "error: '%s' failed\n", command.c_str());
    return 1;
  }

  ParallelPlan plan;
  plan.dp = 8;
  plan.pp = 64;
  plan.microbatches = 1024;
  SimulationOptions metrics_only;
  metrics_only.record_events = false;
  metrics_only.record_memory = false;
  double checksum = 0;  // keeps the work observable
  const double core = best_ms(repeats, [&] {
    const Schedule schedule = build_schedule(plan);
    checksum += simulate(schedule, CostModel::unit(UnitCosts{}), metrics_only).makespan;
  });

  std::printf("pipelab-cli simulate, 1f1b dp 8 x pp 64, m 1024; best of %d wall ms\n", repeats);
  std::printf("%-34s %10.1f\n", "whole command (process, JSON out)", whole);
  std::printf("%-34s %10.1f\n", "build + simulate in process (peer)", core);
  std::printf("%-34s %10.2fx\n", "ratio whole / peer", whole / core);
  std::printf("%-34s %10s\n", "under one second", whole < 1000.0 ? "yes" : "no");
  if (checksum < 0) std::printf("impossible\n");
  return 0;
}
