// Fuzz target: the text of an experiment file, opened as the app and the CLI
// open it (load unvalidated, validate, then predict the run).
#include <cstddef>
#include <cstdint>

#include "core/io/experiment_io.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pipelab;
  Experiment experiment;
  try {
    experiment = parse_experiment_unvalidated(fuzz::as_text(data, size), "");
  } catch (const ExperimentError& error) {
    fuzz::require_safe_message(error.what());
    return 0;
  }
  fuzz::open_like_the_app(experiment);
  return 0;
}
