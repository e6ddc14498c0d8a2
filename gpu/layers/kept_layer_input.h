// A stage layer's input that the CUDA stage keeps in bf16 under bf16-mixed
// instead of float32 (a linear's or a conv2d's: kept_bf16.h's
// layer_input_kept_bf16). DeviceStackMath's hooks keep_layer_input and
// restore_layer_input (core/nn/stage_stack.h) are these functions: the
// rounded input becomes the layer's LayerState (a linear or a conv2d keeps
// none of its own), so offloading moves it and byte counts see 2 bytes a
// value, and the stage's float32 slot is freed.
//
// The backward reads it widened back to float32 (exact), only while the
// layer's backward runs (as Workspace). Its weight gradient's GEMM rounds
// that to bf16 again and so reads the very bits it read when the stage kept
// the float32 input (rounding a bf16 value gives it back), and its input
// gradient reads W alone: losses cannot change.
#pragma once

#include <memory>

#include "core/nn/basic_layer.h"
#include "gpu/layers/device_context.h"
#include "gpu/layers/layer.h"
#include "gpu/memory/device_tensor.h"

namespace pipelab::gpu {

// Under bf16-mixed (with the context's keeps_bf16_gemm_inputs), when
// layer_input_kept_bf16 says so for `layer`, moves `input` into `state`
// rounded to bf16 and leaves `input` empty; otherwise does nothing.
void keep_layer_input(GpuLayer& layer, bool stage_input, bool gathers_sequence, DeviceTensor& input,
                      std::unique_ptr<LayerState>& state);

// Whether `state` is an input keep_layer_input kept (null: no).
bool holds_layer_input(const LayerState* state);

// That input in float32, its shape as given, counted as Workspace on `context`.
DeviceTensor restore_layer_input(const LayerState& state, DeviceContext& context);

}  // namespace pipelab::gpu
