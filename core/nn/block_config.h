// The GptBlockConfig of a transformer_block entry of a stage's layout: the
// model spec's fields, the per-position width, the model's default ffn width
// (4 dim) and the plan's selective recompute. One definition, so the CPU and
// the CUDA stacks build the same block.
#pragma once

#include "core/nn/gpt_block.h"
#include "core/nn/stack_layout.h"

namespace pipelab {

GptBlockConfig block_config(const LayerLayout& layer);

}  // namespace pipelab
