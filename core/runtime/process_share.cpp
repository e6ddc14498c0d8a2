#include "core/runtime/process_share.h"

#include <stdexcept>
#include <string>

namespace pipelab {

ProcessShare process_share(int devices, int ranks, int rank, int devices_per_rank) {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    throw std::invalid_argument("rank " + std::to_string(rank) + " of " + std::to_string(ranks) +
                                " is not a rank of the run");
  const std::string run = std::to_string(devices) + " virtual device(s) (dp x tp x pp) on " +
                          std::to_string(ranks) + " rank(s)";
  if (devices_per_rank == 0) {
    if (devices % ranks != 0)
      throw std::invalid_argument(
          run +
          ": every rank hosts as many devices; start a number of ranks that "
          "divides " +
          std::to_string(devices) + " (mpirun -np)");
    devices_per_rank = devices / ranks;
  }
  if (devices_per_rank < 1 || static_cast<long long>(devices_per_rank) * ranks != devices)
    throw std::invalid_argument(
        run + " with --devices-per-rank " + std::to_string(devices_per_rank) +
        ": ranks x devices per rank must equal the devices (dp x tp x pp = " +
        std::to_string(devices) + ")");
  ProcessShare share;
  share.rank = rank;
  share.ranks = ranks;
  share.device_count = devices_per_rank;
  share.first_device = rank * devices_per_rank;
  return share;
}

}  // namespace pipelab
