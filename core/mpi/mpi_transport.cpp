#include "core/mpi/mpi_transport.h"

#include "core/mpi/mpi_link.h"

namespace pipelab::mpi {

void MpiTransport::post(int to, const MessageTag& tag, const float* values, int64_t rows,
                        int64_t cols) {
  if (local_.hosts(to))
    local_.post(to, tag, values, rows, cols);
  else
    link_.send_tensor(to, tag, values, rows, cols);
}

}  // namespace pipelab::mpi
