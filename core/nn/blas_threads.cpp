#include "core/nn/blas_threads.h"

#include <cblas.h>

#include <stdexcept>
#include <string>

namespace pipelab {

void set_blas_threads(int threads) {
  if (threads < 1)
    throw std::invalid_argument("BLAS threads must be >= 1, got " + std::to_string(threads));
  openblas_set_num_threads(threads);
}

int blas_threads() { return openblas_get_num_threads(); }

}  // namespace pipelab
