// What the executors can train today, checked before a run starts so the user
// reads why a model that the simulator predicts cannot run here.
#pragma once

#include "core/io/experiment.h"

namespace pipelab {

// Throws ExperimentError naming the field and the fix when `experiment` asks
// for something the executors do not train: bf16-mixed precision other than
// on cuda (and there with conv2d, residual_block or moe layers), and of
// Transformers (a model starting with an embedding) anything but the cpu
// backend at tp = 1 with next-token cross-entropy and no dropout inside the
// blocks, ZeRO 3, and ZeRO with optimizer offloading or (zero 2) with
// sequence parallelism. The simulator predicts all of these.
void check_trainable(const Experiment& experiment);

}  // namespace pipelab
