#include "core/sim/gemm_time.h"

#include <algorithm>

namespace pipelab {
namespace {

// Rows and columns of C per tile (cuBLAS's common Ampere/Hopper tile).
constexpr int64_t kTile = 128;
// The inner-dimension length below which split-K does not go.
constexpr int64_t kSmallestSplit = 256;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

double gemm_tile_fill(const GemmShape& shape, int compute_units) {
  if (compute_units <= 0) return 1.0;
  const int64_t units = compute_units;
  const int64_t tiles = ceil_div(shape.m, kTile) * ceil_div(shape.n, kTile) * shape.batch;
  if (tiles <= 0) return 1.0;  // an empty product: nothing to fill
  int64_t splits = 1;
  if (tiles < units)
    splits = std::max<int64_t>(1, std::min(units / tiles, shape.k / kSmallestSplit));
  const int64_t work = tiles * splits;
  const int64_t waves = ceil_div(work, units);
  return static_cast<double>(work) / static_cast<double>(waves * units);
}

double gemm_seconds(const GemmShape& shape, const DeviceProfile& device, int64_t element_bytes) {
  const double flops = shape.flops();
  if (device.compute_units <= 0) return flops / device.flops_per_s;
  const double m = static_cast<double>(shape.m), n = static_cast<double>(shape.n),
               k = static_cast<double>(shape.k);
  const double batch = static_cast<double>(shape.batch);
  const double bytes = static_cast<double>(element_bytes);
  const double arithmetic =
      flops / (device.flops_per_s * gemm_tile_fill(shape, device.compute_units));
  const double reads = (m * k + k * n) * batch * bytes / device.memory_bandwidth;
  const double write = m * n * batch * bytes / device.memory_bandwidth;
  return std::max(arithmetic, reads) + write;
}

}  // namespace pipelab
