// The JSON form of an experiment, both ways. Internal to core/io (it exposes
// nlohmann_json); other folders use experiment_io.h.
#pragma once

#include "core/io/experiment.h"
#include "core/io/json_reader.h"

namespace pipelab {

// Reads every section, checking keys, types and names. Does not resolve
// data.path and does not run validate_experiment. Throws ExperimentError.
Experiment experiment_from_json(const Json& document);

// Every field, in a fixed order, so a saved file reads the same each time and
// every field can be overridden by its path.
Json experiment_to_json_value(const Experiment& experiment);

}  // namespace pipelab
