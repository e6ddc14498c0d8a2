// Partitioner: which contiguous run of layers each pipeline stage holds.
// Every layer is a possible cut point; each stage holds at least one layer.
#pragma once

#include <vector>

#include "core/model/model_spec.h"
#include "core/plan/parallel_plan.h"

namespace pipelab {

struct LayerRange {
  int begin = 0;  // first layer index
  int end = 0;    // one past the last layer index
};

// Splits the layers into plan.stages() ranges by plan.partition:
//  - Balanced: minimise the slowest stage's forward+backward FLOPs,
//  - Uniform: equal layer counts (first stages take the remainder),
//  - Params: minimise the largest stage's parameter count,
//  - Explicit: plan.boundaries.
// Throws std::invalid_argument naming the field and the fix, e.g.
// "pp = 8 but the model has 5 splittable layers".
std::vector<LayerRange> partition_layers(const ModelSpec& model, const ParallelPlan& plan);

}  // namespace pipelab
