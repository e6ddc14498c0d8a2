// pipelab-cli devices: the CPU and each GPU this build can use.
#include <iomanip>
#include <ostream>
#include <thread>

#include "core/cli/cli_args.h"
#include "core/cli/cli_commands.h"

namespace pipelab {

int command_devices(const std::vector<std::string>& args, std::ostream& out, const CliHooks& hooks) {
  parse_args("devices", args, {});
  const unsigned cores = std::thread::hardware_concurrency();
  out << "cpu: " << (cores ? cores : 1) << " hardware threads (the CPU backend runs one thread per "
      << "virtual device)\n";
  if (!hooks.probe_gpus) {
    out << "cuda: not built (configure with -DPIPELAB_CUDA=ON on a machine with the CUDA toolkit)\n";
    return kExitOk;
  }
  const GpuInventory probe = hooks.probe_gpus();
  if (probe.gpus.empty()) {
    out << "cuda: " << (probe.unavailable_reason.empty() ? "no CUDA device" : probe.unavailable_reason)
        << "; use the CPU backend (backend.type = cpu)\n";
  }
  for (const GpuInfo& gpu : probe.gpus) {
    out << "gpu " << gpu.index << ": " << gpu.name << ", " << std::fixed << std::setprecision(1)
        << gpu.total_bytes / double(1 << 30) << " GiB (" << gpu.free_bytes / double(1 << 30)
        << " GiB free), compute capability " << gpu.compute_major << "." << gpu.compute_minor << "\n";
  }
  out << "nccl: ";
  if (probe.nccl_available) {
    const int v = probe.nccl_version;
    out << "available";
    if (v > 0) out << " (" << v / 10000 << "." << (v / 100) % 100 << "." << v % 100 << ")";
    out << "\n";
  } else {
    out << "not available (multi-GPU transfers use peer copies)\n";
  }
  return kExitOk;
}

}  // namespace pipelab
