// How long a GPU takes for one GEMM of a given shape. A large GEMM runs at the
// device's sustained rate (DeviceProfile::flops_per_s, the catalogue's
// gemm_fraction of the datasheet peak); a smaller or thinner one runs below it
// for three reasons this model counts:
//  - tiles: the output is cut into 128 x 128 tiles, each computed by one
//    compute unit (SM); the last wave of tiles leaves units idle. When there
//    are fewer tiles than units the inner dimension is split (split-K, down
//    to 256 per split) to fill them.
//  - the output's write: each tile writes its block of C after its inner
//    loop, so a GEMM writes m x n values at the memory bandwidth on top of
//    its arithmetic. This is what makes a short inner dimension (a head's 64
//    to 160 in attention's Q K^T, a tensor-parallel shard's slice) slow.
//  - reads: a GEMM cannot run faster than reading A and B once.
// Checked against the GEMMs timed on an H200 (hardware/measurements/
// h200-gemm-shapes.json; tests/core/sim/gemm_time_test.cpp). A device with no
// compute units (a CPU core) runs every GEMM at flops_per_s.
#pragma once

#include <cstdint>

#include "core/hardware/device_profile.h"
#include "core/model/gemm_shape.h"

namespace pipelab {

// Seconds for one GEMM of `shape` whose operands and output hold
// `element_bytes` per value, on `device` (flops_per_s the rate of the run's precision).
double gemm_seconds(const GemmShape& shape, const DeviceProfile& device, int64_t element_bytes);

// The share of the compute units a GEMM's tiles keep busy over its waves, in (0, 1].
double gemm_tile_fill(const GemmShape& shape, int compute_units);

}  // namespace pipelab
