// How many threads OpenBLAS uses inside one GEMM.
//
// The CPU executor runs one thread per virtual device, and those threads call
// cblas_sgemm at the same time; each device must stay single-threaded so that
// devices do not steal each other's cores and timings mean something. Debian
// 12's OpenBLAS (0.3.21, pthread build) only has a process-wide setting
// (openblas_set_num_threads; no per-thread API), so call set_blas_threads(1)
// once, before the device threads start. Concurrent calls are safe in that
// build, and with one thread each GEMM runs on its caller's thread.
#pragma once

namespace pipelab {

// Process-wide: every later GEMM uses at most `threads` threads (>= 1).
void set_blas_threads(int threads);
int blas_threads();

}  // namespace pipelab
