// The whole `pipelab-cli simulate` command at scale, from start to exit, as a
// user runs it, JSON out, on two plans:
//   - dp 8 x pp 64 1F1B with 1024 micro-batches at unit costs (the flags
//     form; target: under one second);
//   - the 1T GPT of Megatron-LM's published table on 3,072 A100s (tp 8 x pp
//     64 x dp 6, 512 micro-batches, full recomputation by block:
//     examples/published/megatron_2021_gpt_1008b.json; target: under two
//     seconds on one core).
// The peer is the same prediction made in this process (metrics only, replica
// 0 standing for every replica as the command does): their ratio is what the
// command adds around the simulator (argument parsing, JSON, process start and
// exit). The whole run simulated replica by replica is printed beside it, for
// what simulating one replica saves.
//
// Usage: simulate_command [pipelab-cli path] (the build's by default)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/io/experiment_io.h"
#include "core/schedule/lowering.h"
#include "core/sim/experiment_prediction.h"
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

pipelab::SimulationOptions metrics_only(bool first_replica_only) {
  pipelab::SimulationOptions options;
  options.record_events = false;
  options.record_memory = false;
  options.first_replica_only = first_replica_only;
  return options;
}

// One plan's three timings, its ratio and whether the whole command meets its target.
void print_plan(const char* plan, double whole, double peer, double every_replica,
                const char* target, double target_ms) {
  std::printf("%s\n", plan);
  std::printf("  %-40s %10.1f\n", "whole command (process, JSON out)", whole);
  std::printf("  %-40s %10.1f\n", "replica 0 in process (peer)", peer);
  std::printf("  %-40s %10.1f\n", "every replica in process", every_replica);
  std::printf("  %-40s %10.2fx\n", "ratio whole command / peer", whole / peer);
  std::printf("  %-40s %10s\n", target, whole < target_ms ? "yes" : "no");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace pipelab;
  const std::string cli = argc > 1 ? argv[1] : PIPELAB_CLI_PATH;
  const std::string one_t =
      std::string(PIPELAB_SOURCE_DIR) + "/examples/published/megatron_2021_gpt_1008b.json";
  const int repeats = 3;
  double checksum = 0;  // keeps the work observable

  const auto command_ms = [&](const std::string& arguments) {
    const std::string command = cli + " simulate " + arguments + " > /dev/null";
    bool failed = false;
    const double ms =
        best_ms(repeats, [&] { failed = failed || std::system(command.c_str()) != 0; });
    if (failed) {
      std::fprintf(stderr, "error: '%s' failed\n", command.c_str());
      std::exit(1);
    }
    return ms;
  };

  // Unit costs, from flags.
  const double flags_whole = command_ms("--schedule 1f1b --stages 64 --microbatches 1024 --dp 8");
  ParallelPlan plan;
  plan.dp = 8;
  plan.pp = 64;
  plan.microbatches = 1024;
  const auto unit_cost = [&](bool first_replica_only) {
    return best_ms(repeats, [&] {
      const Schedule schedule = build_schedule(plan, {}, 0, first_replica_only);
      checksum += simulate(schedule, CostModel::unit(UnitCosts{}), metrics_only(first_replica_only))
                      .makespan;
    });
  };
  const double flags_peer = unit_cost(true);
  const double flags_all = unit_cost(false);

  // The published 1T GPT on its cluster.
  const double one_t_whole = command_ms("--config " + one_t);
  const Experiment experiment = load_experiment(one_t);
  const auto predicted = [&](bool first_replica_only) {
    return best_ms(repeats, [&] {
      checksum += predict_experiment(experiment, std::nullopt, 0, metrics_only(first_replica_only))
                      .result.makespan;
    });
  };
  const double one_t_peer = predicted(true);
  const double one_t_all = predicted(false);

  std::printf("pipelab-cli simulate, best of %d, wall ms\n", repeats);
  print_plan("1f1b dp 8 x pp 64, m 1024, unit costs", flags_whole, flags_peer, flags_all,
             "under one second", 1000.0);
  print_plan("GPT 1T on 3,072 A100s, tp 8 x pp 64 x dp 6, m 512 (published table row 10)",
             one_t_whole, one_t_peer, one_t_all, "under two seconds", 2000.0);
  if (checksum < 0) std::printf("impossible\n");
  return 0;
}
