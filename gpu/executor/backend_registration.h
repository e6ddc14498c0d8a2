// The CUDA backend's entry point: main() calls register_cuda_backend() once at
// start-up, after which make_executor builds a CudaExecutor for experiments
// with backend.type = "cuda". Safe on a machine without a GPU: registering
// makes no CUDA call; building an executor there throws ExperimentError
// "... no CUDA device ...; use backend.type = cpu".
#pragma once

namespace pipelab::gpu {

void register_cuda_backend();

}  // namespace pipelab::gpu
