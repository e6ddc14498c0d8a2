// pipelab-cli's commands, as a library so tests can run them in-process.
// app/pipelab_cli_main.cpp only wires argv and the GPU probe into run_cli().
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/gpu_inventory.h"

namespace pipelab {

class RankSession;  // rank_session.h

struct CliHooks {
  std::function<GpuInventory()> probe_gpus;  // set by a CUDA build (gpu/'s query_gpus)
  // Set by an MPI build (core/mpi): joins the job mpirun started, with the
  // silence (seconds) after which a rank counts as gone.
  std::function<std::unique_ptr<RankSession>(double silence_limit_s)> join_ranks;
};

// Exit codes: 0 success, 1 internal error, 2 user error (one line on `err`
// saying what to fix).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitUsage = 2;

// args excludes the program name. Never throws.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            const CliHooks& hooks = {});

}  // namespace pipelab
