#include "core/mpi/mpi_call.h"

#include <chrono>
#include <stdexcept>
#include <thread>

namespace pipelab::mpi {

void check(int code, const std::string& call, int rank) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw std::runtime_error("rank " + std::to_string(rank) + ": " + call +
                           " failed: " + std::string(text, static_cast<size_t>(length)));
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void wait_for(MPI_Request& request, double timeout_s, int rank, int peer, const std::string& what) {
  const double begin = steady_seconds();
  const double deadline = begin + timeout_s;
  for (;;) {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test (" + what + ")", rank);
    if (done) return;
    if (steady_seconds() > deadline) {
      const std::string who = peer >= 0 ? "rank " + std::to_string(peer) : "another rank";
      throw std::runtime_error("rank " + std::to_string(rank) + ": " + who +
                               " did not answer within " +
                               std::to_string(static_cast<int>(timeout_s)) + " s during " + what);
    }
    // Spinning for the first millisecond keeps the clock pings' round trips
    // short; sleeping after it spares the cores the devices run on.
    if (steady_seconds() - begin < 1e-3)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void barrier(MPI_Comm comm, double timeout_s, int rank, const std::string& what) {
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibarrier(comm, &request), "MPI_Ibarrier (" + what + ")", rank);
  wait_for(request, timeout_s, rank, -1, what);
}

}  // namespace pipelab::mpi
