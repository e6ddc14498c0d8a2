// Evaluation of a run over processes happens on rank 0 (pipeline_executor.h):
// the other ranks send the weights of their replica-0 stage shards (and of
// replica 0's expert-parallel group under expert parallelism) as one row
// of floats, and rank 0 puts them into copies of those shards it keeps for the
// purpose, which the evaluator then reads as it reads local stages.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/io/experiment.h"
#include "core/nn/sequential.h"
#include "core/plan/partition.h"

namespace pipelab {

// Every layer's parameters, then its buffers (batch norm's running
// statistics), in layer order, as one row.
std::vector<float> flat_evaluation_weights(Sequential& stage);
// The reverse, into a stage of the same shape. Throws std::runtime_error
// when `count` is not the stage's.
void set_evaluation_weights(Sequential& stage, const float* values, int64_t count);

// Shard `shard` of pipeline stage `stage` holding `experts` of its moe
// layers, built as its device builds it (its weights are overwritten before
// use); on no device.
std::unique_ptr<Sequential> stage_copy_for_evaluation(
    const Experiment& experiment, const std::vector<LayerRange>& stage_ranges,
    const std::vector<TensorParallelRole>& tp_roles, int stage, int shard, ExpertShard experts);

}  // namespace pipelab
