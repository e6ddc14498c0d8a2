// Fuzz target: --set overrides, one "key.path=value" per line, applied to the
// experiment the app starts with, then opened as the CLI opens it.
#include <cstddef>
#include <cstdint>

#include "core/io/experiment_io.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pipelab;
  Experiment experiment = default_experiment();
  try {
    apply_overrides(experiment, fuzz::split_lines(fuzz::as_text(data, size)));
  } catch (const ExperimentError& error) {
    fuzz::require_safe_message(error.what());
    return 0;
  }
  fuzz::open_like_the_app(experiment);
  return 0;
}
