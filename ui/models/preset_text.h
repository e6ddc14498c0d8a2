// Figures in a preset's note come from the predictor, so a note never states a
// number the app would not show. A note names them in braces:
//
//   {step_ms}         predicted time of one training step, in ms
//   {bubble_percent}  predicted bubble, in % of device time
//   {peak_mib.D}      device D's predicted peak memory, in MiB
//   {host_mib.D}      what device D parks in host memory at its peak, in MiB
//   {states_mib.D}    device D's model states (weights, gradients and optimizer
//                     state, each at its peak): what ZeRO shards, in MiB
//   {activations_mib.D} device D's predicted peak of activations, in MiB
//   {sent_mib.D}      what device D sends its data-parallel group per step
//                     (gradients, ZeRO's weights), in MiB
//   {ring_mib.D}      what device D sends its context-parallel group per step
//                     (the attention's K and V and their gradients), in MiB
//
// each of the preset's own experiment, or of a variant of it given by
// overrides after an @, as --set takes them:
//
//   {step_ms @ parallel.offload=none, parallel.recompute=true}
//
// Values are written with one decimal.
#pragma once

#include <QString>

#include "core/io/experiment.h"

namespace pipelab {

// `text` with every figure replaced by its predicted value. Throws
// ExperimentError naming the figure when it is unknown, its overrides do not
// apply, or the experiment cannot be predicted.
QString expand_prediction_figures(const QString& text, const Experiment& experiment);

}  // namespace pipelab
