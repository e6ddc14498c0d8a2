// How many bytes a device sends per training step, by the group it sends to:
// what a ring moves through each member. A collective over n members whose
// whole buffer is B bytes sends (n - 1) / n x B from each (an all-reduce
// twice that: a reduce-scatter then an all-gather); a point-to-point send its
// message. This is where ZeRO's price shows: per step, zero 1 and 2 send what
// plain data parallelism sends (a reduce-scatter and an all-gather in place of
// the all-reduce), zero 3 half as much again (the weights are gathered for
// the forward and again for the backward: 1.5x, the ZeRO paper's section 7.2).
#pragma once

#include "core/schedule/schedule.h"

namespace pipelab {

struct CommunicationVolume {
  double data_parallel = 0;    // gradients and ZeRO's weights; synced batch norm's statistics
  double tensor_parallel = 0;  // the layers' all-reduces, sequence parallelism's gathers and scatters
  double expert_parallel = 0;  // the MoE layers' all-to-alls
  double context_parallel = 0;  // ring attention's K and V, and their gradients
  double pipeline = 0;         // activations and gradients to the neighbouring stages
  double total() const { return data_parallel + tensor_parallel + expert_parallel + context_parallel + pipeline; }
};

// Bytes `device` of a lowered schedule sends per step (the window's sends
// over its steps). Parameter-server pushes and pulls and host copies are not
// counted.
CommunicationVolume communication_per_step(const Schedule& lowered, int device);

}  // namespace pipelab
