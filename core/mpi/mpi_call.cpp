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

std::vector<std::string> all_gather_text(MPI_Comm comm, const std::string& text, double timeout_s,
                                         int rank, const std::string& what) {
  int ranks = 0;
  check(MPI_Comm_size(comm, &ranks), "MPI_Comm_size (" + what + ")", rank);
  // First every rank's length, then the texts side by side.
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<size_t>(ranks));
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm, &request),
        "MPI_Iallgather (" + what + ")", rank);
  wait_for(request, timeout_s, rank, -1, what);
  std::vector<int> offsets(static_cast<size_t>(ranks), 0);
  for (size_t r = 1; r < offsets.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::string joined(static_cast<size_t>(offsets.back() + lengths.back()), '\0');
  check(MPI_Iallgatherv(text.data(), length, MPI_CHAR, joined.data(), lengths.data(),
                        offsets.data(), MPI_CHAR, comm, &request),
        "MPI_Iallgatherv (" + what + ")", rank);
  wait_for(request, timeout_s, rank, -1, what);
  std::vector<std::string> texts;
  for (size_t r = 0; r < offsets.size(); ++r)
    texts.push_back(joined.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(lengths[r])));
  return texts;
}

}  // namespace pipelab::mpi
