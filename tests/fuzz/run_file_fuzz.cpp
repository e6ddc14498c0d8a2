// Fuzz target: a run file's text, opened as Runs > Open a run… opens it.
// A run that is accepted must have what the views index by (devices, and
// every event and memory sample on one of them), sum up (run_statistics) and
// write back to text that reads again to the same number of records.
#include <cstddef>
#include <cstdint>

#include "core/io/run_file.h"
#include "core/trace/run_statistics.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pipelab;
  try {
    const RunRecord run = parse_run(fuzz::as_text(data, size));
    const int devices = static_cast<int>(run.trace.devices.size());
    if (devices == 0) __builtin_trap();
    for (const TraceEvent& event : run.trace.events)
      if (event.device < 0 || event.device >= devices) __builtin_trap();
    for (const MemorySample& sample : run.trace.memory)
      if (sample.device < 0 || sample.device >= devices) __builtin_trap();
    run_statistics(run.trace);
    const RunRecord again = parse_run(run_to_json(run));
    if (again.trace.events.size() != run.trace.events.size() ||
        again.trace.memory.size() != run.trace.memory.size() ||
        again.trace.steps.size() != run.trace.steps.size())
      __builtin_trap();
  } catch (const RunFileError& error) {
    fuzz::require_safe_message(error.what());
  }
  return 0;
}
