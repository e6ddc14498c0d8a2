// Checked MPI calls. The run's communicator returns errors (MPI_ERRORS_RETURN)
// instead of aborting, so every call's result is checked here and a failure
// becomes an exception naming this rank, the call and MPI's own words.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace pipelab::mpi {

// Throws std::runtime_error "rank R: CALL failed: <MPI's error string>" unless
// `code` is MPI_SUCCESS.
void check(int code, const std::string& call, int rank);

// Seconds of std::chrono::steady_clock's own epoch: the clock every rank's
// run clock counts from (core/runtime/run_clock.h).
double steady_seconds();

// Waits for `request` to complete, for at most `timeout_s`; throws
// std::runtime_error "rank R: rank S did not answer within T s during WHAT"
// (S: `peer`, or "another rank" when -1) when it does not.
void wait_for(MPI_Request& request, double timeout_s, int rank, int peer, const std::string& what);

// Every rank reaches this point, or an error after `timeout_s`.
void barrier(MPI_Comm comm, double timeout_s, int rank, const std::string& what);

// Every rank's `text`, by rank (an all-gather of any lengths), or an error
// after `timeout_s` per round.
std::vector<std::string> all_gather_text(MPI_Comm comm, const std::string& text, double timeout_s,
                                         int rank, const std::string& what);

}  // namespace pipelab::mpi
