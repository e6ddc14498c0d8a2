// DeviceLayout: how global device ids map onto the dp x pp x cp x tp grid,
// and which pipeline rank runs which stage. Plans, schedules, the simulator,
// the executors and traces all number devices this one way:
//   device = ((replica * pp + pipeline_rank) * cp + context) * tp + shard
// so the shards of a stage sit next to each other, then the context-parallel
// ranks that split its sequence (cp = 1 without context parallelism), and a
// replica is one block.
// Stage s runs on pipeline rank s % pp as that rank's chunk s / pp (interleaved,
// "looped" placement; with one chunk per rank, stage s is rank s). The V
// placement of zb-v has two chunks per rank: the stages go down the ranks and
// back up, so rank r holds stage r (chunk 0) and stage 2 pp - 1 - r (chunk 1),
// and rank 0 holds both the first and the last stage.
#pragma once

#include <cassert>

namespace pipelab {

// Where a device sits in the grid.
struct DeviceCoord {
  int replica = 0;
  int pipeline_rank = 0;
  int shard = 0;
  int context = 0;  // context-parallel rank: which part of the sequence it holds
};

struct DeviceLayout {
  int dp = 1;  // data-parallel replicas
  int tp = 1;  // tensor-parallel shards per stage
  int pp = 1;  // pipeline ranks
  bool v_shape = false;  // V placement (zb-v): exactly two chunks per rank
  int ep = 1;  // expert parallelism: groups of ep consecutive replicas (ep divides dp)
  int cp = 1;  // context parallelism: ranks that split each sequence, per replica and stage

  int device_count() const { return dp * tp * cp * pp; }

  int device_of(int replica, int pipeline_rank, int shard, int context = 0) const {
    return ((replica * pp + pipeline_rank) * cp + context) * tp + shard;
  }
  int device_of(DeviceCoord coord) const {
    return device_of(coord.replica, coord.pipeline_rank, coord.shard, coord.context);
  }
  DeviceCoord coord_of(int device) const {
    assert(device >= 0 && device < device_count());
    DeviceCoord coord;
    coord.shard = device % tp;
    coord.context = (device / tp) % cp;
    coord.pipeline_rank = (device / (tp * cp)) % pp;
    coord.replica = device / (tp * cp * pp);
    return coord;
  }

  int rank_of_stage(int stage) const {
    if (v_shape) return stage < pp ? stage : 2 * pp - 1 - stage;
    return stage % pp;
  }
  int chunk_of_stage(int stage) const { return stage / pp; }  // the same in both placements
  int stage_of(int pipeline_rank, int chunk) const {
    if (v_shape && chunk == 1) return 2 * pp - 1 - pipeline_rank;
    return chunk * pp + pipeline_rank;
  }

  // The device that runs `stage` in the replica, context rank and shard of
  // `device`: its peer along the pipeline.
  int pipeline_peer(int device, int stage) const {
    DeviceCoord coord = coord_of(device);
    coord.pipeline_rank = rank_of_stage(stage);
    return device_of(coord);
  }
};

}  // namespace pipelab
