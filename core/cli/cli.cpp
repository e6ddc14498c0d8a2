#include "core/cli/cli.h"

#include <exception>
#include <iostream>
#include <string>

#include "core/cli/cli_args.h"
#include "core/cli/cli_commands.h"
#include "core/data/dataset.h"
#include "core/io/experiment_io.h"
#include "core/plan/parallel_plan.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {
namespace {

const char* kUsage =
    "pipelab-cli: schedules, simulation and training of pipeline-parallel networks\n"
    "\n"
    "usage:\n"
    "  pipelab-cli schedule --schedule NAME --stages P --microbatches M [--chunks V]\n"
    "                       [--steps S] [--format text|json]\n"
    "  pipelab-cli simulate (--config FILE | --schedule NAME --stages P --microbatches M\n"
    "                       [--dp D] [--tp T] [--chunks V] [--recompute] [--offload "
    "none|activations|optimizer]\n"
    "                       [--update sync|async] [--staleness K])\n"
    "                       [--steps S] [--cost f=1,b=1,w=1,comm=0,u=0] [--profile NAME]\n"
    "                       [--set key.path=value ...] [--trace FILE.json] [--csv PREFIX]\n"
    "  pipelab-cli train --config FILE [--set key.path=value ...] [--steps N]\n"
    "                    [--backend cpu|cuda] [--trace FILE.json] [--csv PREFIX]\n"
    "                    [--summary FILE.json] [--replay-trace FILE.json] [--save-run FILE.json]\n"
    "                    [--quiet] [--serve PORT [--serve-allow IPV4,...]]  (live view: pipelab "
    "--attach HOST:PORT)\n"
    "  mpirun -np R pipelab-cli train ... [--devices-per-rank K] [--rank-timeout SECONDS]\n"
    "      one run over R processes: rank r runs devices r K .. r K + K - 1 (K = devices / R),\n"
    "      rank 0 writes the trace, CSV and summary; a rank silent for SECONDS (5) stops the run.\n"
    "      --backend cuda: each rank on GPU (local rank mod GPUs); tensors between ranks by NCCL "
    "when\n"
    "      every rank has a GPU of its own, else through host memory.\n"
    "  pipelab-cli calibrate --config FILE [--set key.path=value ...] [--steps N] [--backend "
    "cpu|cuda]\n"
    "                        [--write DEVICE.json]\n"
    "      measures N steps on the experiment's backend (or --backend's) at two micro-batch counts "
    "and\n"
    "      fits the GEMM rate, the cost of each op\n"
    "      and the link; --write saves them as a device file (and its node file beside it) that\n"
    "      --set simulation.profile=DEVICE.json uses\n"
    "  pipelab-cli plan --config FILE --devices N [--memory-per-device BYTES] [--planner "
    "dapple|pipedream]\n"
    "                   [--bandwidth BYTES_PER_S] [--set key.path=value ...] [--json] [--write "
    "FILE.json]\n"
    "      --planner dapple (default) tries every pp, dp and micro-batch count on 1F1B, each "
    "simulated,\n"
    "      so its plan runs as predicted; pipedream solves PipeDream's dynamic program over stages "
    "and\n"
    "      per-stage replicas, and writes the closest uniform dp x pp when its optimum is not "
    "uniform.\n"
    "      Sizes: 16GiB, 80GB or bytes; --memory-per-device defaults to the profile's memory.\n"
    "  pipelab-cli plan --config FILE --planner search [--devices N] [--memory-per-device BYTES]\n"
    "                   [--margin SHARE] [--top K] [--max-simulations N] [--export "
    "megatron|torchtitan]\n"
    "                   [--space DIMENSION=V1,V2 ...] [--set key.path=value ...] [--json] [--write "
    "FILE.json]\n"
    "      searches tp, cp, pp, dp, ep, ZeRO stage, schedule, recompute, offload and micro-batches "
    "on all N devices\n"
    "      (default: the experiment's simulation.cluster), ranks what fits (1 - SHARE, 0.1, of "
    "each\n"
    "      device's memory) by simulated step, says why every other candidate was pruned, and "
    "hands\n"
    "      the best plan over as Megatron-LM flags or a torchtitan job section. --space keeps a\n"
    "      dimension (tp, cp, pp, dp, ep, zero, schedule, recompute, offload, microbatches) to the "
    "values given.\n"
    "  pipelab-cli validate --config FILE [--set key.path=value ...]\n"
    "  pipelab-cli devices\n"
    "  pipelab-cli --help | --version\n"
    "\n"
    "--steps S (schedule, simulate): the steps one window of the schedule spans (0, the default:\n"
    "  the schedule's own, or staleness + 2 under async data parallelism)\n";

// The usage text, with the schedule names read from the schedule table.
std::string usage() {
  std::string text = kUsage;
  text += "schedules:";
  const char* separator = " ";
  for (const std::string& name : schedule_names()) {
    text += separator + name;
    separator = ", ";
  }
  text += "\nexit codes: 0 success, 2 a mistake in the input (the message says what to fix)\n";
  return text;
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            const CliHooks& hooks) {
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      (args.empty() ? err : out) << usage();
      return args.empty() ? kExitUsage : kExitOk;
    }
    if (args[0] == "--version") {
      out << "pipelab-cli 0.1.0\n";
      return kExitOk;
    }
    const std::string command = args[0];
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    for (const auto& arg : rest) {
      if (arg == "--help" || arg == "-h") {
        out << usage();
        return kExitOk;
      }
    }
    if (command == "schedule") return command_schedule(rest, out);
    if (command == "simulate") return command_simulate(rest, out);
    if (command == "plan") return command_plan(rest, out);
    if (command == "validate") return command_validate(rest, out);
    if (command == "calibrate") return command_calibrate(rest, out);
    if (command == "devices") return command_devices(rest, out, hooks);
    if (command == "train") return command_train(rest, out, err, hooks);
    throw UsageError("unknown command " + quoted_excerpt(command) +
                     "; commands: schedule, simulate, train, plan, calibrate, validate, devices (see --help)");
  } catch (const UsageError& error) {
    err << "pipelab-cli: " << error.what() << "\n";
    return kExitUsage;
  } catch (const ExperimentError& error) {
    err << "pipelab-cli: " << error.what() << "\n";
    return kExitUsage;
  } catch (const DataError& error) {
    // A missing or malformed data file: the message names the file and the problem.
    err << "pipelab-cli: data: " << error.what() << "\n";
    return kExitUsage;
  } catch (const std::invalid_argument& error) {
    // Generators and the partitioner report impossible plans this way.
    err << "pipelab-cli: " << error.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& error) {
    err << "pipelab-cli: internal error: " << error.what() << "\n";
    return kExitInternal;
  }
}

}  // namespace pipelab
