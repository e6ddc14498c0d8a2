#include "core/trace/chrome_trace.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/trace/bubbles.h"
#include "core/trace/json_writer.h"

namespace pipelab {

double chrome_microseconds_per_unit(const Trace& trace) {
  // Unit-cost ops last one unit; drawn as 1 ms they read well at Perfetto's zoom.
  return trace.time_unit == "unit" ? 1000.0 : 1e6;
}

int chrome_pid(int device) { return device + 1; }
int chrome_compute_tid(int device) { return chrome_pid(device) * 10; }
int chrome_communication_tid(int device) { return chrome_pid(device) * 10 + 1; }

namespace {

const char* comm_group_name(CommGroup group) {
  switch (group) {
    case CommGroup::None:
      return "none";
    case CommGroup::TensorParallel:
      return "tensor_parallel";
    case CommGroup::DataParallel:
      return "data_parallel";
    case CommGroup::ExpertParallel:
      return "expert_parallel";
  }
  return "none";
}

// Writes the trace's events; one object per call, each on its own line.
class ChromeEventWriter {
 public:
  ChromeEventWriter(JsonWriter& json, double microseconds_per_unit)
      : json_(json), scale_(microseconds_per_unit) {}

  // Trace time -> microseconds, rounded to whole nanoseconds so the text stays
  // short ("1500.25", not "1500.2500000000002").
  double to_us(double t) const { return std::round(t * scale_ * 1000.0) / 1000.0; }

  void metadata(const char* name, int pid, int tid, const char* arg_name, const std::string& text) {
    begin(name, "M", pid, tid);
    json_.key("args");
    json_.begin_object();
    json_.field(arg_name, text);
    json_.end_object();
    json_.end_object();
  }
  void sort_index(const char* name, int pid, int tid, int index) {
    begin(name, "M", pid, tid);
    json_.key("args");
    json_.begin_object();
    json_.field("sort_index", index);
    json_.end_object();
    json_.end_object();
  }

  // Opens an event object and writes the common fields; the caller adds the
  // rest and closes it.
  void begin(const std::string& name, const char* phase, int pid, int tid) {
    json_.begin_object();
    json_.field("name", name);
    json_.field("ph", phase);
    json_.field("pid", pid);
    json_.field("tid", tid);
  }
  void timed(double t_begin, double t_end) {
    const double ts = to_us(t_begin);
    json_.field("ts", ts);
    json_.field("dur", std::max(0.0, to_us(t_end) - ts));
  }

  JsonWriter& json() { return json_; }

 private:
  JsonWriter& json_;
  double scale_;
};

void write_device_metadata(ChromeEventWriter& writer, const Trace& trace, int device) {
  const int pid = chrome_pid(device);
  writer.metadata("process_name", pid, chrome_compute_tid(device), "name",
                  device_label(trace, device));
  writer.sort_index("process_sort_index", pid, chrome_compute_tid(device), device);
  writer.metadata("thread_name", pid, chrome_compute_tid(device), "name", "compute");
  writer.sort_index("thread_sort_index", pid, chrome_compute_tid(device), 0);
  writer.metadata("thread_name", pid, chrome_communication_tid(device), "name", "communication");
  writer.sort_index("thread_sort_index", pid, chrome_communication_tid(device), 1);
}

void write_op_event(ChromeEventWriter& writer, const TraceEvent& event) {
  const Op& op = event.op;
  const bool compute = is_compute(op.kind);
  const int tid =
      compute ? chrome_compute_tid(event.device) : chrome_communication_tid(event.device);
  writer.begin(op_label(op), "X", chrome_pid(event.device), tid);
  JsonWriter& json = writer.json();
  json.field("cat", op_kind_name(op.kind));
  writer.timed(event.t_begin, event.t_end);
  json.key("args");
  json.begin_object();
  json.field("kind", op_kind_name(op.kind));
  json.field("stage", op.stage);
  json.field("chunk", op.chunk);
  json.field("microbatch", op.microbatch);
  json.field("step", op.step);
  json.field("weight_version", op.weight_version);
  json.field("weight_delay", op.weight_delay);
  json.field("peer", op.peer);
  json.field("bytes", event.bytes);
  json.field("layer", op.layer);
  if (op.group != CommGroup::None) json.field("group", comm_group_name(op.group));
  json.field("duration", event.t_end - event.t_begin);  // in the trace's own unit
  json.end_object();
  json.end_object();
}

void write_bubble_event(ChromeEventWriter& writer, const BubbleSlice& bubble) {
  writer.begin("bubble", "X", chrome_pid(bubble.device), chrome_compute_tid(bubble.device));
  JsonWriter& json = writer.json();
  json.field("cat", "bubble");
  json.field("cname", "grey");  // chrome://tracing colour; Perfetto ignores it
  writer.timed(bubble.t_begin, bubble.t_end);
  json.key("args");
  json.begin_object();
  json.field("duration", bubble.t_end - bubble.t_begin);
  json.end_object();
  json.end_object();
}

void write_memory_events(ChromeEventWriter& writer, const MemorySample& sample) {
  JsonWriter& json = writer.json();
  const int pid = chrome_pid(sample.device);
  const int tid = chrome_compute_tid(sample.device);
  // All categories in one counter: a stacked chart in chrome://tracing, one
  // track per category in Perfetto.
  writer.begin("memory", "C", pid, tid);
  json.field("ts", writer.to_us(sample.t));
  json.key("args");
  json.begin_object();
  for (int category = 0; category < kMemoryCategoryCount; ++category) {
    if (!is_on_device(static_cast<MemoryCategory>(category))) continue;  // not part of the stack
    json.field(memory_category_name(static_cast<MemoryCategory>(category)),
               sample.bytes[static_cast<size_t>(category)]);
  }
  json.end_object();
  json.end_object();

  writer.begin("memory host", "C", pid, tid);
  json.field("ts", writer.to_us(sample.t));
  json.key("args");
  json.begin_object();
  json.field("bytes", sample.bytes[static_cast<size_t>(MemoryCategory::Host)]);
  json.end_object();
  json.end_object();

  writer.begin("memory total", "C", pid, tid);
  json.field("ts", writer.to_us(sample.t));
  json.key("args");
  json.begin_object();
  json.field("bytes", total_bytes(sample.bytes));
  json.end_object();
  json.end_object();
}

struct NamedMetric {
  const char* name;
  double value;
};

std::vector<NamedMetric> step_metric_values(const StepMetrics& step) {
  return {{"loss", step.loss},
          {"accuracy", step.accuracy},
          {"val_loss", step.val_loss},
          {"val_accuracy", step.val_accuracy},
          {"step_time_s", step.step_time_s},
          {"samples_per_s", step.samples_per_s},
          {"bubble_measured", step.bubble_measured},
          {"bubble_simulated", step.bubble_simulated}};
}

// Metrics drawn as counters; the rest appear only in the step markers' args.
bool is_counter_metric(const std::string& name) {
  return name == "loss" || name == "accuracy" || name == "val_loss" || name == "val_accuracy" ||
         name == "samples_per_s";
}

void write_step_events(ChromeEventWriter& writer, const StepMetrics& step, int pid) {
  JsonWriter& json = writer.json();
  const int tid = pid * 10;
  const std::vector<NamedMetric> metrics = step_metric_values(step);
  for (const NamedMetric& metric : metrics) {
    // A counter sample of NaN would draw as 0; leave it out instead.
    if (!is_counter_metric(metric.name) || !std::isfinite(metric.value)) continue;
    writer.begin(metric.name, "C", pid, tid);
    json.field("ts", writer.to_us(step.t_end));
    json.key("args");
    json.begin_object();
    json.field("value", metric.value);
    json.end_object();
    json.end_object();
  }

  // A global instant: a vertical line across every device at the step's end.
  writer.begin("step " + std::to_string(step.step), "i", pid, tid);
  json.field("cat", "step");
  json.field("s", "g");
  json.field("ts", writer.to_us(step.t_end));
  json.key("args");
  json.begin_object();
  json.field("step", step.step);
  for (const NamedMetric& metric : metrics) {
    if (std::isfinite(metric.value)) json.field(metric.name, metric.value);
  }
  json.end_object();
  json.end_object();
}

void write_metadata_object(JsonWriter& json, const Trace& trace, int devices) {
  const bool unit_cost = trace.time_unit == "unit";
  json.begin_object();
  json.field("generator", "PipeLab");
  json.field("source", trace.source);
  json.field("schedule", trace.schedule);
  json.field("time_unit", trace.time_unit);
  json.field("microseconds_per_time_unit", chrome_microseconds_per_unit(trace));
  json.field("time_scale",
             unit_cost ? "unit-cost trace: 1 unit is drawn as 1000 us (1 ms)" : "1 s = 1000000 us");
  json.field("devices", devices);
  json.field("memory_unit", "bytes");
  json.field("bubble_fraction", bubble_fraction(trace));  // null when undefined
  json.end_object();
}

}  // namespace

void write_chrome_trace(const Trace& trace, std::ostream& out) {
  const int devices = device_count(trace);
  JsonWriter json(out);
  ChromeEventWriter writer(json, chrome_microseconds_per_unit(trace));

  json.begin_object();
  json.field("displayTimeUnit", "ms");
  json.key("traceEvents");
  json.begin_array(/*one_per_line=*/true);
  for (int device = 0; device < devices; ++device) write_device_metadata(writer, trace, device);
  for (const TraceEvent& event : trace.events) write_op_event(writer, event);
  for (const BubbleSlice& bubble : find_bubbles(trace)) write_bubble_event(writer, bubble);
  for (const MemorySample& sample : trace.memory) write_memory_events(writer, sample);
  if (!trace.steps.empty()) {
    // Step metrics belong to no device: they get their own process, after the devices.
    const int training_pid = chrome_pid(devices);
    writer.metadata("process_name", training_pid, training_pid * 10, "name", "training");
    writer.sort_index("process_sort_index", training_pid, training_pid * 10, devices);
    for (const StepMetrics& step : trace.steps) write_step_events(writer, step, training_pid);
  }
  json.end_array();
  json.key("metadata");
  write_metadata_object(json, trace, devices);
  json.end_object();
  out << '\n';
}

}  // namespace pipelab
