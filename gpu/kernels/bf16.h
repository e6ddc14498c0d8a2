// float32 <-> bfloat16 conversion on the device (bf16_math.h's rounding), for
// mixed precision's bf16 weight copies, GEMM inputs and kept layer inputs. bf16 values are kept
// as uint16_t bits, which cuBLAS reads as CUDA_R_16BF. Launches on `stream`
// (of the current device) and returns without waiting.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pipelab::gpu::kernels {

// target[i] = source[i] rounded to bf16 (nearest, ties to even).
void to_bf16(const float* source, uint16_t* target, int64_t count, cudaStream_t stream);
// target[i] = source[i] widened back to float32 (exact).
void from_bf16(const uint16_t* source, float* target, int64_t count, cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
