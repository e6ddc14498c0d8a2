// Simulator scaling: wall time to simulate 1F1B plans from a few devices to
// dp 8 x pp 64 with 1024 micro-batches (~3 million ops), with the full trace
// and with metrics only. The peer is copying the schedule once (every op read
// and written): the simulator's time over it says how far it is from the
// cheapest O(ops) pass on this machine.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "core/schedule/lowering.h"
#include "core/sim/simulator.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Timing {
  double wall_ms = 1e300;  // best of the repeats
  double cpu_ms = 1e300;   // process CPU time of that repeat
};

// Best of `repeats` runs of `work`.
template <typename Work>
Timing measure(int repeats, Work&& work) {
  Timing best;
  for (int i = 0; i < repeats; ++i) {
    const std::clock_t cpu_start = std::clock();
    const Clock::time_point start = Clock::now();
    work();
    const double wall = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    const double cpu = 1000.0 * double(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    if (wall < best.wall_ms) best = {wall, cpu};
  }
  return best;
}

}  // namespace

int main() {
  using namespace pipelab;
  struct Case {
    int dp, pp, microbatches;
  };
  const Case cases[] = {{1, 4, 8},    {1, 8, 64},   {1, 16, 256},
                        {4, 16, 256}, {8, 32, 512}, {8, 64, 1024}};
  const CostModel cost = CostModel::unit(UnitCosts{1, 1, 1, 0.1, 0.5});
  SimulationOptions metrics_only;
  metrics_only.record_events = false;
  metrics_only.record_memory = false;

  std::printf("1F1B, unit costs (f=b=w=1, comm=0.1, u=0.5); best of repeats; wall (cpu) ms\n");
  std::printf("%4s %4s %6s %8s %10s %18s %18s %10s %12s %8s\n", "dp", "pp", "m", "devices", "ops",
              "simulate+trace", "simulate metrics", "Mops/s", "copy (peer)", "ratio");
  for (const Case& c : cases) {
    ParallelPlan plan;
    plan.dp = c.dp;
    plan.pp = c.pp;
    plan.microbatches = c.microbatches;
    const Schedule schedule = build_schedule(plan);
    size_t ops = 0;
    for (const auto& device : schedule.devices) ops += device.size();
    const int repeats = ops > 1'000'000 ? 3 : 10;

    double checksum = 0;  // keeps the work observable
    const Timing full = measure(repeats, [&] { checksum += simulate(schedule, cost).makespan; });
    const Timing metrics =
        measure(repeats, [&] { checksum += simulate(schedule, cost, metrics_only).makespan; });
    const Timing copy = measure(repeats, [&] {
      Schedule copied = schedule;
      checksum += copied.devices.back().back().step;
    });
    const double mops = ops / (full.wall_ms * 1e3);
    std::printf("%4d %4d %6d %8d %10zu %8.1f (%7.1f) %8.1f (%7.1f) %10.2f %12.1f %7.1fx\n", c.dp,
                c.pp, c.microbatches, schedule.device_count(), ops, full.wall_ms, full.cpu_ms,
                metrics.wall_ms, metrics.cpu_ms, mops, copy.wall_ms, full.wall_ms / copy.wall_ms);
    if (checksum < 0) std::printf("impossible\n");
  }
  return 0;
}
