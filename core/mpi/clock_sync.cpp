#include "core/mpi/clock_sync.h"

#include "core/mpi/mpi_call.h"

namespace pipelab::mpi {
namespace {

constexpr int kClockTag = 2;  // the link's messages use their own tag

}  // namespace

std::vector<ClockOffset> measure_clock_offsets(MPI_Comm comm, int rank, int ranks, int rounds,
                                               double timeout_s) {
  const std::string what = "the clock pings";
  if (rank != 0) {
    for (int round = 0; round < rounds; ++round) {
      double ping = 0;
      MPI_Request request = MPI_REQUEST_NULL;
      check(MPI_Irecv(&ping, 1, MPI_DOUBLE, 0, kClockTag, comm, &request), "MPI_Irecv (clock ping)",
            rank);
      wait_for(request, timeout_s, rank, 0, what);
      const double now = steady_seconds();
      check(MPI_Send(&now, 1, MPI_DOUBLE, 0, kClockTag, comm), "MPI_Send (clock answer)", rank);
    }
    return {};
  }
  std::vector<ClockOffset> offsets(static_cast<size_t>(ranks));
  for (int peer = 1; peer < ranks; ++peer) {
    std::vector<ClockSample> samples;
    for (int round = 0; round < rounds; ++round) {
      ClockSample sample;
      MPI_Request request = MPI_REQUEST_NULL;
      check(MPI_Irecv(&sample.remote, 1, MPI_DOUBLE, peer, kClockTag, comm, &request),
            "MPI_Irecv (clock answer)", rank);
      sample.sent = steady_seconds();
      check(MPI_Send(&sample.sent, 1, MPI_DOUBLE, peer, kClockTag, comm), "MPI_Send (clock ping)",
            rank);
      wait_for(request, timeout_s, rank, peer, what);
      sample.received = steady_seconds();
      samples.push_back(sample);
    }
    offsets[static_cast<size_t>(peer)] = estimate_clock_offset(samples);
  }
  return offsets;
}

}  // namespace pipelab::mpi
