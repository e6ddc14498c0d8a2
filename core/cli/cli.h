// pipelab-cli's commands, as a library so tests can run them in-process.
// app/pipelab_cli_main.cpp only wires argv and the GPU probe into run_cli().
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace pipelab {

// What the GPU backend reports; filled in by the app when it is built with CUDA.
struct GpuSummary {
  int index = 0;
  std::string name;
  int64_t total_bytes = 0;
  int64_t free_bytes = 0;
  int compute_major = 0;
  int compute_minor = 0;
};

struct GpuProbe {
  bool built_with_cuda = false;
  std::vector<GpuSummary> gpus;
  std::string unavailable_reason;
  bool nccl_available = false;
  int nccl_version = 0;
};

struct CliHooks {
  std::function<GpuProbe()> probe_gpus;  // empty: built without CUDA
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
