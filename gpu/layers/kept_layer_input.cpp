#include "gpu/layers/kept_layer_input.h"

#include <cassert>
#include <utility>
#include <vector>

#include "gpu/kernels/bf16.h"
#include "gpu/layers/kept_bf16.h"
#include "gpu/layers/kept_gemm_input.h"

namespace pipelab::gpu {
namespace {

struct KeptLayerInput : MovableLayerState<DeviceTensor> {
  KeptGemmInput input;  // bf16 (float32 only when empty)
  int64_t rows = 0;     // the float32 input's shape
  int64_t cols = 0;
  int64_t bytes() const override { return input.bytes(); }
  std::vector<DeviceTensor*> tensors() override { return {&input.stored()}; }
};

}  // namespace

void keep_layer_input(GpuLayer& layer, bool stage_input, bool gathers_sequence, DeviceTensor& input,
                      std::unique_ptr<LayerState>& state) {
  if (!layer_input_kept_bf16(layer.context().keeps_bf16_gemm_inputs(), layer.type(), stage_input,
                             gathers_sequence))
    return;
  assert(!state);  // a linear or a conv2d keeps no state of its own
  auto kept = std::make_unique<KeptLayerInput>();
  kept->rows = input.rows();
  kept->cols = input.cols();
  kept->input = KeptGemmInput(std::move(input), true);
  input.reset();
  state = std::move(kept);
}

bool holds_layer_input(const LayerState* state) {
  return dynamic_cast<const KeptLayerInput*>(state) != nullptr;
}

DeviceTensor restore_layer_input(const LayerState& state, DeviceContext& context) {
  const auto& kept = static_cast<const KeptLayerInput&>(state);
  DeviceTensor input = DeviceTensor::uninitialized(kept.rows, kept.cols, &context.allocator(),
                                                   MemoryCategory::Workspace);
  if (kept.input.bf16())
    kernels::from_bf16(kept.input.gemm_input().bf16, input.data(), kept.input.count(),
                       input.stream());
  return input;  // (an empty input has no values to widen)
}

}  // namespace pipelab::gpu
