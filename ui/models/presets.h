// Presets: the classic pipeline-parallelism comparisons, each one click away:
// naive model parallelism vs GPipe, GPipe vs 1F1B memory, interleaving, zero
// bubble, asynchronous PipeDream and its weight versions, PipeMare without a
// stash, data-parallel ring all-reduce, tensor parallelism, and expert
// parallelism's all-to-alls. Every preset is a complete, valid
// experiment on the same small model, so switching between them compares
// schedules, not models.
#pragma once

#include <QString>
#include <vector>

#include "core/io/experiment.h"

namespace pipelab {

struct Preset {
  QString id;           // stable, for tests and scripts: "gpipe", "naive", ...
  QString title;        // menu text
  QString what_to_see;  // one or two sentences: what to look at in this preset
  Experiment experiment;
};

std::vector<Preset> presets();

}  // namespace pipelab
