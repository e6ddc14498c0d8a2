// What the executors can train today, checked before a run starts so the user
// reads why a model that the simulator predicts cannot run here.
#pragma once

#include "core/io/experiment.h"

namespace pipelab {

// Throws ExperimentError naming the field and the fix when `experiment` asks
// for something the executors do not train: Transformer layers (embedding,
// transformer_block) and bf16-mixed precision are simulated only for now.
void check_trainable(const Experiment& experiment);

}  // namespace pipelab
