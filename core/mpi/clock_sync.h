// Measures every rank's steady-clock offset to rank 0 (core/runtime/
// clock_offset.h) by ping-pong over MPI, before the run starts and before the
// link's thread takes over the communicator.
#pragma once

#include <mpi.h>

#include <vector>

#include "core/comm/clock_offset.h"

namespace pipelab::mpi {

// Collective: every rank calls it. On rank 0, the offset of every rank (its
// own is 0 +- 0); elsewhere empty. `rounds` pings per rank; a rank that does
// not answer within `timeout_s` is an error naming it.
std::vector<ClockOffset> measure_clock_offsets(MPI_Comm comm, int rank, int ranks, int rounds,
                                               double timeout_s);

}  // namespace pipelab::mpi
