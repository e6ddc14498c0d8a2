// Run files: a finished run (the experiment it ran and everything it
// recorded: timeline events, memory samples, step metrics) as one JSON file,
// so the app can save a run and reopen it next to another for comparison.
//
//   {"format": "pipelab-run", "version": 1, "name": "...",
//    "experiment": {...as an experiment file...},
//    "trace": {"source": "measured", "time_unit": "s", "schedule": "1f1b",
//              "devices": [{"device", "replica", "pipeline_rank", "shard", ["context",] "stages", "label"}],
//              "event_columns": [...], "events": [[one row per event], ...],
//              "memory_columns": [...], "memory": [[one row per sample], ...],
//              "steps": [{"step", "t_end", "loss", ...}, ...]}}
//
// Events and memory samples are rows whose columns the file names (see
// kRunEventColumns, kRunMemoryColumns), which keeps long runs compact. A NaN
// metric is null. Statistics are not stored: they are computed from the trace
// (core/trace/run_statistics.h).
#pragma once

#include <stdexcept>
#include <string>

#include "core/io/experiment.h"
#include "core/trace/trace_events.h"

namespace pipelab {

// A run file that cannot be read or written. what() is one line that names
// the file (when there is one) and the field, and says what to do.
class RunFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One recorded run.
struct RunRecord {
  std::string name;  // how the app lists it, e.g. "1 · gpipe · MNIST MLP"
  Experiment experiment;
  Trace trace;
};

inline constexpr const char* kRunFileFormat = "pipelab-run";
inline constexpr int kRunFileVersion = 1;
// Run files are larger than experiments (every op of every step), but a file
// beyond this is not one PipeLab wrote: save_run refuses to write one.
inline constexpr size_t kMaxRunFileBytes = size_t{1} << 30;  // 1 GiB
// More devices than any run on one machine has; keeps a bad id from sizing views.
inline constexpr int kMaxRunFileDevices = 1 << 16;

std::string run_to_json(const RunRecord& run);
// Throws RunFileError when the file cannot be written, or would be larger
// than kMaxRunFileBytes (it could not be opened again); an existing file at
// `path` is then left as it was.
void save_run(const RunRecord& run, const std::string& path);
// Why a run file of `bytes` (a trace of `events` and `memory_samples`) would
// not open again, with what to do instead; empty when it would.
std::string run_file_size_problem(size_t bytes, size_t events, size_t memory_samples);

// Throws RunFileError for text that is not JSON, not a run file, of another
// version, or with a value of the wrong type or out of range; and for a run
// that contradicts itself as the live view refuses a stream to: an
// experiment that does not validate, devices other than its plan's 0, 1, ...
// in order, an event or memory sample on a device the run lacks, or a name or
// label longer than 4,096 bytes.
RunRecord parse_run(const std::string& text);
// The same from a file; messages start with its path.
RunRecord load_run(const std::string& path);

// Whether the file at `path` begins as the run files PipeLab writes do (its
// first key is "format": "pipelab-run"), so a file given to open can go to
// the runs rather than be read as an experiment. False when it cannot be read.
bool starts_as_run_file(const std::string& path);

}  // namespace pipelab
