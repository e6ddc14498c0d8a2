// PIPELAB_HOST_DEVICE marks small math functions that both the CUDA kernels and
// ordinary host code call: under nvcc they compile for the host and the device,
// under a plain C++ compiler they are ordinary inline functions. Keeping one
// definition is what lets host tests check the GPU's formulas without a GPU.
#pragma once

#if defined(__CUDACC__)
#define PIPELAB_HOST_DEVICE __host__ __device__
#else
#define PIPELAB_HOST_DEVICE
#endif
