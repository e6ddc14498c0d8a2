#include "core/io/run_file.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include "core/io/experiment_io.h"
#include "core/io/experiment_json.h"
#include "core/io/json_document.h"
#include "core/io/json_reader.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {
namespace {

// The columns of an event row and of a memory row, in order.
const std::vector<std::string> kEventColumns = {
    "device", "kind",  "stage", "chunk",    "microbatch", "step",  "weight_version", "weight_delay",
    "peer",   "group", "layer", "op_bytes", "t_begin",    "t_end", "bytes"};
const std::vector<std::string> kMemoryColumns = {
    "device",          "t",           "weights",         "gradients",
    "optimizer_state", "activations", "stashed_weights", "comm_buffers",
    "workspace",       "host"};
// A run file nests 4 levels (top, trace, events, row); its experiment 4 below "experiment".
constexpr int kMaxRunJsonDepth = 16;

Json number_or_null(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }

Json device_json(const DeviceInfo& info) {
  Json json{{"device", info.device}, {"replica", info.replica}, {"pipeline_rank", info.pipeline_rank},
            {"shard", info.shard},   {"stages", info.stages},   {"label", info.label}};
  if (info.context > 0) json["context"] = info.context;  // context-parallel runs only
  return json;
}

Json event_row(const TraceEvent& event) {
  const Op& op = event.op;
  return Json::array({event.device, op_kind_name(op.kind), op.stage, op.chunk, op.microbatch,
                      op.step, op.weight_version, op.weight_delay, op.peer,
                      comm_group_name(op.group), op.layer, op.bytes, event.t_begin, event.t_end,
                      event.bytes});
}

Json memory_row(const MemorySample& sample) {
  Json row = Json::array({sample.device, sample.t});
  for (int64_t bytes : sample.bytes) row.push_back(bytes);
  return row;
}

Json step_json(const StepMetrics& step) {
  Json json{{"step", step.step},
            {"t_end", step.t_end},
            {"loss", number_or_null(step.loss)},
            {"accuracy", number_or_null(step.accuracy)},
            {"val_loss", number_or_null(step.val_loss)},
            {"val_accuracy", number_or_null(step.val_accuracy)},
            {"step_time_s", step.step_time_s},
            {"samples_per_s", number_or_null(step.samples_per_s)},
            {"bubble_measured", number_or_null(step.bubble_measured)},
            {"bubble_simulated", number_or_null(step.bubble_simulated)}};
  if (step.expert_load.empty()) return json;  // no moe layers
  json["aux_loss"] = number_or_null(step.aux_loss);
  Json loads = Json::array();
  for (const ExpertLoad& load : step.expert_load)
    loads.push_back(
        Json{{"layer", load.layer}, {"routed", load.routed}, {"dropped", load.dropped}});
  json["expert_load"] = std::move(loads);
  return json;
}

// --- reading ----------------------------------------------------------------

// The whole message a user sees: ui_core_message_sites_test reads its calls as sites.
[[noreturn]] void run_file_error(const std::string& message) { throw RunFileError(message); }

std::string at(const std::string& field, size_t index) {
  return field + "[" + std::to_string(index) + "]";
}

// A number that may be null (a NaN metric).
double number_or_nan(const Json& value, const std::string& field) {
  if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
  return json_to_number(value, field);
}

double finite_number(const Json& value, const std::string& field) {
  const double number = json_to_number(value, field);
  if (!std::isfinite(number))
    run_file_error(field + " = " + json_value_text(value) + " is not a finite number");
  return number;
}

int device_id(const Json& value, const std::string& field) {
  const int device = json_to_int(value, field);
  if (device < 0 || device >= kMaxRunFileDevices)
    run_file_error(field + " = " + std::to_string(device) + " is not a device id (0 to " +
                   std::to_string(kMaxRunFileDevices - 1) + ")");
  return device;
}

const Json& member(const Json& object, const std::string& key, const std::string& path) {
  const auto found = object.find(key);
  if (found == object.end()) run_file_error(path + " has no \"" + key + "\"");
  return *found;
}

const Json& array_member(const Json& object, const std::string& key, const std::string& path) {
  const Json& value = member(object, key, path);
  if (!value.is_array())
    run_file_error(path + "." + key + " must be an array, got " + json_value_text(value));
  return value;
}

const Json& row_of(const Json& rows, size_t index, size_t columns, const std::string& field) {
  const Json& row = rows[index];
  if (!row.is_array() || row.size() != columns)
    run_file_error(at(field, index) + " must be an array of " + std::to_string(columns) +
                   " values, got " + json_value_text(row));
  return row;
}

void check_columns(const Json& trace, const std::string& key,
                   const std::vector<std::string>& expected) {
  const Json& columns = member(trace, key, "trace");
  if (columns != Json(expected))
    run_file_error("trace." + key + " is " + json_value_text(columns) +
                   ", not the columns this version of PipeLab reads; save the run again with it");
}

DeviceInfo read_device(const Json& value, const std::string& field) {
  const JsonObjectReader reader(value, field,
                                {"device", "replica", "pipeline_rank", "shard", "context", "stages", "label"});
  DeviceInfo info;
  info.device = device_id(member(value, "device", field), field + ".device");
  reader.read("replica", info.replica);
  reader.read("pipeline_rank", info.pipeline_rank);
  reader.read("shard", info.shard);
  reader.read("context", info.context);
  reader.read("label", info.label);
  if (const Json* stages = reader.find("stages"))
    for (int64_t stage : json_to_integer_list(*stages, field + ".stages"))
      info.stages.push_back(static_cast<int>(stage));
  return info;
}

TraceEvent read_event(const Json& row, const std::string& field) {
  auto column = [&](size_t i) {
    return field + "[" + std::to_string(i) + "] (" + kEventColumns[i] + ")";
  };
  TraceEvent event;
  event.device = device_id(row[0], column(0));
  Op& op = event.op;
  op.device = event.device;
  const std::string kind = json_to_string(row[1], column(1));
  const std::optional<OpKind> parsed = parse_op_kind(kind);
  if (!parsed) run_file_error(column(1) + " = " + quoted_excerpt(kind) + " is not an op kind");
  op.kind = *parsed;
  op.stage = json_to_int(row[2], column(2));
  op.chunk = json_to_int(row[3], column(3));
  op.microbatch = json_to_int(row[4], column(4));
  op.step = json_to_int(row[5], column(5));
  op.weight_version = json_to_int(row[6], column(6));
  op.weight_delay = json_to_int(row[7], column(7));
  op.peer = json_to_int(row[8], column(8));
  const std::string group = json_to_string(row[9], column(9));
  const std::optional<CommGroup> parsed_group = parse_comm_group(group);
  if (!parsed_group)
    run_file_error(column(9) + " = " + quoted_excerpt(group) +
                   " is not a group; valid: none, tensor_parallel, data_parallel, expert_parallel, "
                   "context_parallel");
  op.group = *parsed_group;
  op.layer = json_to_int(row[10], column(10));
  op.bytes = json_to_integer(row[11], column(11));
  event.t_begin = finite_number(row[12], column(12));
  event.t_end = finite_number(row[13], column(13));
  if (event.t_end < event.t_begin) run_file_error(field + " ends before it begins");
  event.bytes = json_to_integer(row[14], column(14));
  return event;
}

MemorySample read_sample(const Json& row, const std::string& field) {
  MemorySample sample;
  sample.device = device_id(row[0], at(field, 0));
  sample.t = finite_number(row[1], at(field, 1));
  for (int c = 0; c < kMemoryCategoryCount; ++c) {
    sample.bytes[c] = json_to_integer(row[2 + c], at(field, 2 + c));
    if (sample.bytes[c] < 0 || sample.bytes[c] > kMaxCategoryBytes)
      run_file_error(at(field, 2 + c) + " = " + std::to_string(sample.bytes[c]) +
                     " is not a byte count (0 to 2^53)");
  }
  return sample;
}

// One moe layer's load: counts per expert, as many dropped as routed.
ExpertLoad read_expert_load(const Json& value, const std::string& field) {
  const JsonObjectReader reader(value, field, {"layer", "routed", "dropped"});
  ExpertLoad load;
  load.layer = json_to_int(member(value, "layer", field), field + ".layer");
  load.routed = json_to_integer_list(member(value, "routed", field), field + ".routed");
  load.dropped = json_to_integer_list(member(value, "dropped", field), field + ".dropped");
  if (load.dropped.size() != load.routed.size())
    run_file_error(field + " has " + std::to_string(load.routed.size()) + " routed counts but " +
                   std::to_string(load.dropped.size()) + " dropped ones (one of each per expert)");
  return load;
}

StepMetrics read_step(const Json& value, const std::string& field) {
  const JsonObjectReader reader(
      value, field,
      {"step", "t_end", "loss", "accuracy", "val_loss", "val_accuracy", "step_time_s",
       "samples_per_s", "bubble_measured", "bubble_simulated", "aux_loss", "expert_load"});
  StepMetrics step;
  step.step = json_to_int(member(value, "step", field), field + ".step");
  step.t_end = finite_number(member(value, "t_end", field), field + ".t_end");
  auto optional_number = [&](const char* key, double& target) {
    if (const Json* found = reader.find(key)) target = number_or_nan(*found, reader.field(key));
  };
  optional_number("loss", step.loss);
  optional_number("accuracy", step.accuracy);
  optional_number("val_loss", step.val_loss);
  optional_number("val_accuracy", step.val_accuracy);
  optional_number("step_time_s", step.step_time_s);
  optional_number("samples_per_s", step.samples_per_s);
  optional_number("bubble_measured", step.bubble_measured);
  optional_number("bubble_simulated", step.bubble_simulated);
  optional_number("aux_loss", step.aux_loss);
  if (reader.find("expert_load")) {
    const Json& loads = array_member(value, "expert_load", field);
    for (size_t i = 0; i < loads.size(); ++i)
      step.expert_load.push_back(read_expert_load(loads[i], at(field + ".expert_load", i)));
  }
  return step;
}

Trace read_trace(const Json& value) {
  const JsonObjectReader reader(value, "trace",
                                {"source", "time_unit", "schedule", "devices", "event_columns",
                                 "events", "memory_columns", "memory", "steps"});
  Trace trace;
  reader.read("source", trace.source);
  reader.read("time_unit", trace.time_unit);
  reader.read("schedule", trace.schedule);
  check_columns(value, "event_columns", kEventColumns);
  check_columns(value, "memory_columns", kMemoryColumns);
  const Json& devices = array_member(value, "devices", "trace");
  if (devices.size() > static_cast<size_t>(kMaxRunFileDevices))
    run_file_error("trace.devices lists " + std::to_string(devices.size()) +
                   " devices, more than " + std::to_string(kMaxRunFileDevices));
  for (size_t i = 0; i < devices.size(); ++i)
    trace.devices.push_back(read_device(devices[i], at("trace.devices", i)));
  const Json& events = array_member(value, "events", "trace");
  trace.events.reserve(events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    const std::string field = at("trace.events", i);
    trace.events.push_back(read_event(row_of(events, i, kEventColumns.size(), field), field));
  }
  const Json& memory = array_member(value, "memory", "trace");
  trace.memory.reserve(memory.size());
  for (size_t i = 0; i < memory.size(); ++i) {
    const std::string field = at("trace.memory", i);
    trace.memory.push_back(read_sample(row_of(memory, i, kMemoryColumns.size(), field), field));
  }
  const Json& steps = array_member(value, "steps", "trace");
  for (size_t i = 0; i < steps.size(); ++i)
    trace.steps.push_back(read_step(steps[i], at("trace.steps", i)));
  return trace;
}

// A name or label longer than this is not one PipeLab wrote; drawn whole it
// would keep the window laying out text for minutes.
constexpr size_t kMaxRunTextBytes = 4096;

void check_text(const std::string& text, const std::string& field) {
  if (text.size() > kMaxRunTextBytes)
    run_file_error(field + " is " + std::to_string(text.size()) + " bytes long, more than the " +
                   std::to_string(kMaxRunTextBytes) +
                   " a run file's names and labels may take; shorten it");
}

// What the views index by and draw, checked as the live view checks a
// stream (core/live/live_frames.cpp): the experiment is valid, the devices are
// its plan's, listed 0, 1, ... in order, and every event and memory sample is
// on one of them.
void check_run(const RunRecord& run) {
  check_text(run.name, "name");
  check_text(run.experiment.name, "experiment.name");
  const Trace& trace = run.trace;
  for (const auto& [text, field] : {std::pair{&trace.source, "trace.source"}, {&trace.time_unit, "trace.time_unit"},
                                    {&trace.schedule, "trace.schedule"}})
    check_text(*text, field);
  const std::vector<std::string> problems = validate_experiment(run.experiment);
  if (!problems.empty())
    run_file_error("experiment: " + problems.front() +
                   " (a run file holds the valid experiment it ran; save the run again)");
  const int devices = run.experiment.parallel.devices();
  if (static_cast<int>(trace.devices.size()) != devices)
    run_file_error("trace.devices lists " + std::to_string(trace.devices.size()) +
                   " devices, but the experiment's plan has " + std::to_string(devices) +
                   " (dp x tp x cp x pp); save the run again");
  for (size_t i = 0; i < trace.devices.size(); ++i) {
    if (trace.devices[i].device != static_cast<int>(i))
      run_file_error(at("trace.devices", i) + " is device " +
                     std::to_string(trace.devices[i].device) +
                     "; the list holds devices 0, 1, ... in order");
    check_text(trace.devices[i].label, at("trace.devices", i) + ".label");
  }
  auto check_device = [&](int device, const std::string& field) {
    if (device >= devices)
      run_file_error(field + " is on device " + std::to_string(device) + ", but the run has " +
                     std::to_string(devices) + " (0 to " + std::to_string(devices - 1) + ")");
  };
  for (size_t i = 0; i < trace.events.size(); ++i) check_device(trace.events[i].device, at("trace.events", i));
  for (size_t i = 0; i < trace.memory.size(); ++i) check_device(trace.memory[i].device, at("trace.memory", i));
}

Json parse_json(const std::string& text) {
  return parse_json_document(
      text, JsonLimits{kMaxRunFileBytes, kMaxRunJsonDepth, "a run file",
                       "a run file nests 4 ({\"trace\": {\"events\": [[...]]}})", false});
}

}  // namespace

std::string run_to_json(const RunRecord& run) {
  // Written by hand at the top level so each event and sample takes one line.
  const Trace& trace = run.trace;
  std::ostringstream out;
  out << "{\"format\": " << Json(kRunFileFormat).dump() << ", \"version\": " << kRunFileVersion
      << ",\n \"name\": " << Json(run.name).dump(-1, ' ', false, Json::error_handler_t::replace)
      << ",\n \"experiment\": " << experiment_to_json_value(run.experiment).dump()
      << ",\n \"trace\": {\"source\": " << Json(trace.source).dump()
      << ", \"time_unit\": " << Json(trace.time_unit).dump()
      << ", \"schedule\": " << Json(trace.schedule).dump() << ",\n  \"devices\": [";
  auto rows = [&out](const char* key, const auto& items, auto to_json) {
    out << ",\n  \"" << key << "\": [";
    for (size_t i = 0; i < items.size(); ++i)
      out << (i ? ",\n   " : "\n   ")
          << to_json(items[i]).dump(-1, ' ', false, Json::error_handler_t::replace);
    out << (items.empty() ? "]" : "\n  ]");
  };
  for (size_t i = 0; i < trace.devices.size(); ++i)
    out << (i ? ",\n   " : "\n   ")
        << device_json(trace.devices[i]).dump(-1, ' ', false, Json::error_handler_t::replace);
  out << (trace.devices.empty() ? "]" : "\n  ]");
  out << ",\n  \"event_columns\": " << Json(kEventColumns).dump();
  rows("events", trace.events, event_row);
  out << ",\n  \"memory_columns\": " << Json(kMemoryColumns).dump();
  rows("memory", trace.memory, memory_row);
  rows("steps", trace.steps, step_json);
  out << "}}\n";
  return out.str();
}

std::string run_file_size_problem(size_t bytes, size_t events, size_t memory_samples) {
  if (bytes <= kMaxRunFileBytes) return "";
  const auto millions = [](size_t count) {
    return std::to_string(count / 100000 / 10) + "." + std::to_string(count / 100000 % 10) +
           " million";
  };
  return "this run (" + millions(events) + " events, " + millions(memory_samples) +
         " memory samples) makes a " +
         std::to_string(bytes >> 20) + " MiB file, more than the " +
         std::to_string(kMaxRunFileBytes >> 20) +
         " MiB a run file may take to open again; export its trace instead (Chrome trace or "
         "CSV), or train fewer steps or micro-batches";
}

void save_run(const RunRecord& run, const std::string& path) {
  const std::string text = run_to_json(run);
  const std::string problem =
      run_file_size_problem(text.size(), run.trace.events.size(), run.trace.memory.size());
  if (!problem.empty())
    throw RunFileError(problem);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw RunFileError("cannot write " + quoted_excerpt(path, kPathExcerptBytes));
  file << text;
  file.close();
  if (!file)
    throw RunFileError("could not finish writing " + quoted_excerpt(path, kPathExcerptBytes));
}

bool starts_as_run_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::string head(64, '\0');
  file.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(file.gcount()));
  const std::string expected = std::string("{\"format\": ") + Json(kRunFileFormat).dump();
  return head.rfind(expected, 0) == 0;
}

RunRecord parse_run(const std::string& text) {
  try {
    const Json document = parse_json(text);
    if (!document.is_object() || document.value("format", Json()) != Json(kRunFileFormat))
      run_file_error(
          "not a PipeLab run file (no \"format\": \"pipelab-run\"); an experiment opens with "
          "File > Open, a run saved with Runs > Save the latest run… opens here");
    const JsonObjectReader reader(document, "",
                                  {"format", "version", "name", "experiment", "trace"});
    const int version = json_to_int(member(document, "version", "the run file"), "version");
    if (version != kRunFileVersion)
      run_file_error("version " + std::to_string(version) +
                     " of the run format; this PipeLab reads version " +
                     std::to_string(kRunFileVersion));
    RunRecord run;
    reader.read("name", run.name);
    try {
      run.experiment = experiment_from_json(member(document, "experiment", "the run file"));
    } catch (const ExperimentError& error) {
      run_file_error(std::string("experiment: ") + error.what());
    }
    run.trace = read_trace(member(document, "trace", "the run file"));
    check_run(run);
    return run;
  } catch (const ExperimentError& error) {
    throw RunFileError(error.what());  // a field of the wrong type or an unknown key
  }
}

RunRecord load_run(const std::string& path) {
  const std::string name = quoted_excerpt(path, kPathExcerptBytes);
  std::error_code ignored;
  if (!std::filesystem::exists(path, ignored)) throw RunFileError("run file not found: " + name);
  if (std::filesystem::is_directory(path, ignored))
    throw RunFileError(name + " is a folder; give a run's .json file");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw RunFileError("cannot open run file " + name);
  // In pieces, stopping one piece past the limit: a huge or endless file
  // (/dev/zero) is refused by the size check, not read whole.
  std::string text;
  std::vector<char> piece(size_t{1} << 20);
  while (file && text.size() <= kMaxRunFileBytes) {
    file.read(piece.data(), static_cast<std::streamsize>(piece.size()));
    text.append(piece.data(), static_cast<size_t>(file.gcount()));
  }
  if (file.bad()) throw RunFileError("cannot read run file " + name);
  try {
    return parse_run(text);
  } catch (const RunFileError& error) {
    throw RunFileError(name + ": " + error.what());
  }
}

}  // namespace pipelab
