#include "conformance_support.h"

#ifdef PIPELAB_HAVE_CUDA
#include "gpu/executor/backend_registration.h"
#endif

namespace pipelab::testing {

std::vector<std::string> conformance_backends() {
#ifdef PIPELAB_HAVE_CUDA
  gpu::register_cuda_backend();  // idempotent
#endif
  return registered_backends();
}

}  // namespace pipelab::testing
