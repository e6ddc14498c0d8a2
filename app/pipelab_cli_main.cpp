// pipelab-cli: the headless front end. Everything but argv, the CUDA backend's
// registration and the GPU probe lives in core/cli so tests can run the
// commands in-process.
#include <iostream>
#include <string>
#include <vector>

#include "core/cli/cli.h"

#ifdef PIPELAB_HAVE_MPI
#include "core/mpi/mpi_session.h"
#endif
#ifdef PIPELAB_HAVE_CUDA
#include "gpu/executor/backend_registration.h"
#include "gpu/device/device_query.h"
#endif

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  pipelab::CliHooks hooks;
#ifdef PIPELAB_HAVE_CUDA
  // backend.type = cuda (or --backend cuda) runs on GPUs from here on.
  pipelab::gpu::register_cuda_backend();
  hooks.probe_gpus = [] { return pipelab::gpu::query_gpus(); };
#endif
#ifdef PIPELAB_HAVE_MPI
  // Under mpirun, train runs this process's share of the devices.
  hooks.join_ranks = [](double silence_limit_s) -> std::unique_ptr<pipelab::RankSession> {
    return std::make_unique<pipelab::mpi::MpiSession>(silence_limit_s);
  };
#endif
  return pipelab::run_cli(args, std::cout, std::cerr, hooks);
}
