#include "core/trace/csv_export.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <vector>

#include "core/trace/chrome_trace.h"
#include "core/trace/number_format.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {

namespace {

// A number cell; NaN and infinities become an empty cell (a missing value to
// pandas and spreadsheets).
std::string number_cell(double value) { return std::isfinite(value) ? format_double(value) : ""; }
std::string integer_cell(int64_t value) { return format_integer(value); }

// Cells are numbers and fixed identifiers (F, SEND_ACT, weights, ...), which
// never contain commas or quotes, so no quoting is needed. Numbers go through
// format_* rather than operator<<, so a stream locale with digit grouping
// cannot break the columns.
void write_row(std::ostream& out, const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out << ',';
    out << cells[i];
  }
  out << '\n';
}

}  // namespace

void write_events_csv(const Trace& trace, std::ostream& out) {
  write_row(out, {"device", "kind", "stage", "chunk", "microbatch", "step", "weight_version",
                  "weight_delay", "peer", "t_begin", "t_end", "duration", "bytes"});
  for (const TraceEvent& event : trace.events) {
    const Op& op = event.op;
    write_row(out, {integer_cell(event.device), op_kind_name(op.kind), integer_cell(op.stage),
                    integer_cell(op.chunk), integer_cell(op.microbatch), integer_cell(op.step),
                    integer_cell(op.weight_version), integer_cell(op.weight_delay), integer_cell(op.peer),
                    number_cell(event.t_begin), number_cell(event.t_end),
                    number_cell(event.t_end - event.t_begin), integer_cell(event.bytes)});
  }
}

void write_memory_csv(const Trace& trace, std::ostream& out) {
  std::vector<std::string> header = {"device", "t"};
  for (int category = 0; category < kMemoryCategoryCount; ++category) {
    header.push_back(memory_category_name(static_cast<MemoryCategory>(category)));
  }
  header.push_back("total");
  write_row(out, header);
  for (const MemorySample& sample : trace.memory) {
    std::vector<std::string> row = {integer_cell(sample.device), number_cell(sample.t)};
    for (int64_t bytes : sample.bytes) row.push_back(integer_cell(bytes));
    row.push_back(integer_cell(total_bytes(sample.bytes)));
    write_row(out, row);
  }
}

void write_steps_csv(const Trace& trace, std::ostream& out) {
  write_row(out, {"step", "t_end", "loss", "accuracy", "val_loss", "val_accuracy", "step_time_s",
                  "samples_per_s", "bubble_measured", "bubble_simulated"});
  for (const StepMetrics& step : trace.steps) {
    write_row(out, {integer_cell(step.step), number_cell(step.t_end), number_cell(step.loss),
                    number_cell(step.accuracy), number_cell(step.val_loss),
                    number_cell(step.val_accuracy), number_cell(step.step_time_s),
                    number_cell(step.samples_per_s), number_cell(step.bubble_measured),
                    number_cell(step.bubble_simulated)});
  }
}

namespace {

// Opens `path`, lets `write` fill it, and reports any failure by path.
bool write_file(const std::string& path, const std::function<void(std::ostream&)>& write,
                std::string* error) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    if (error) {
      const std::string reason = errno != 0 ? std::strerror(errno) : "cannot open";
      *error = "cannot write " + quoted_excerpt(path, kPathExcerptBytes) + " (" + reason +
               "); check that the folder exists and is writable";
    }
    return false;
  }
  write(out);
  out.flush();
  if (!out) {
    if (error)
      *error = "writing " + quoted_excerpt(path, kPathExcerptBytes) + " failed (disk full?); check the free space";
    return false;
  }
  return true;
}

}  // namespace

bool export_trace_files(const Trace& trace, const std::string& chrome_json_path,
                        const std::string& csv_prefix, std::string* error) {
  if (!chrome_json_path.empty()) {
    auto write = [&](std::ostream& out) { write_chrome_trace(trace, out); };
    if (!write_file(chrome_json_path, write, error)) return false;
  }
  if (!csv_prefix.empty()) {
    auto events = [&](std::ostream& out) { write_events_csv(trace, out); };
    auto memory = [&](std::ostream& out) { write_memory_csv(trace, out); };
    auto steps = [&](std::ostream& out) { write_steps_csv(trace, out); };
    if (!write_file(csv_prefix + "_events.csv", events, error)) return false;
    if (!write_file(csv_prefix + "_memory.csv", memory, error)) return false;
    if (!write_file(csv_prefix + "_steps.csv", steps, error)) return false;
  }
  return true;
}

}  // namespace pipelab
