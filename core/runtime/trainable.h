// What the executors can train today, checked before a run starts so the user
// reads why a model that the simulator predicts cannot run here.
#pragma once

#include "core/io/experiment.h"

namespace pipelab {

// Throws ExperimentError naming the field and the fix when `experiment` asks
// for something the executors do not train: a backend other than cpu or cuda
// for Transformers, convolutions, batch norm or experts; a Transformer with a
// loss other than next-token cross-entropy; bf16-mixed precision other than
// on cuda; context parallelism. The simulator predicts all of these.
void check_trainable(const Experiment& experiment);

}  // namespace pipelab
