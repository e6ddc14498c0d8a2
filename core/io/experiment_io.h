// Loading, validating and saving experiment files (JSON).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "core/io/experiment.h"

namespace pipelab {

// A mistake in an experiment a user can fix. what() is one line that names the
// field and says how to fix it, e.g.
//   "parallel.microbatches = 12 does not divide training.batch_size = 256".
class ExperimentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses JSON text. `base_dir` resolves relative data paths (then the working
// directory). Throws ExperimentError for non-JSON text, unknown keys, wrong
// types, unknown names (listing the valid ones) and invalid values.
Experiment parse_experiment(const std::string& json_text, const std::string& base_dir = "");
Experiment load_experiment(const std::string& path);

// The same without validate_experiment (syntax, keys, types and names are
// still checked), so an editor can open a file whose values need fixing and
// show validate_experiment's list. Errors from a file start with its path.
Experiment parse_experiment_unvalidated(const std::string& json_text, const std::string& base_dir = "");
Experiment load_experiment_unvalidated(const std::string& path);

std::string experiment_to_json(const Experiment& experiment);  // pretty, stable key order
void save_experiment(const Experiment& experiment, const std::string& path);

// Applies "key.path=value" (e.g. "parallel.pp=4", "model.layers.0.out=256",
// "parallel.schedule=gpipe"); the value is parsed as JSON when it can be,
// otherwise taken as a string. Re-validates. Throws ExperimentError.
void apply_override(Experiment& experiment, const std::string& assignment);
// Several at once, validated once at the end (so "parallel.pp=8" may come
// before the "model.layers=..." that makes it fit).
void apply_overrides(Experiment& experiment, const std::vector<std::string>& assignments);

// Cross-field checks (divisibility, split feasibility, tp widths, ...). Returns
// every problem found; empty when the experiment can run.
std::vector<std::string> validate_experiment(const Experiment& experiment);
// The checks of the parallel section alone, for an experiment whose model
// describes and whose other sections validate with some split (the split
// search varies only this section; the cluster must hold its devices).
std::vector<std::string> validate_parallel(const Experiment& experiment);
// validate_parallel less its last check, the split itself (profile_stages
// throwing std::invalid_argument), for a caller that profiles the split anyway.
std::vector<std::string> validate_parallel_fields(const Experiment& experiment);

// The experiment the app opens with when no file is given.
Experiment default_experiment();

}  // namespace pipelab
