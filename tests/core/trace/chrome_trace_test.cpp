#include "core/trace/chrome_trace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/trace/bubbles.h"
#include "tests/core/trace/trace_test_helpers.h"

namespace pipelab {
namespace {

using nlohmann::json;
using test::make_two_device_trace;

json export_and_parse(const Trace& trace) {
  std::ostringstream out;
  write_chrome_trace(trace, out);
  // Throws (and fails the test) if the output is not valid JSON.
  return json::parse(out.str());
}

std::vector<json> events_with(const json& document, const std::string& phase,
                              const std::string& name = "") {
  std::vector<json> found;
  for (const json& event : document.at("traceEvents")) {
    if (event.at("ph") == phase && (name.empty() || event.at("name") == name)) {
      found.push_back(event);
    }
  }
  return found;
}

Trace make_trace_with_memory_and_steps() {
  Trace trace = make_two_device_trace();
  MemorySample sample;
  sample.device = 1;
  sample.t = 2.5;
  for (int category = 0; category < kMemoryCategoryCount; ++category) {
    sample.bytes[static_cast<size_t>(category)] = 1000 * (category + 1);
  }
  trace.memory.push_back(sample);
  sample.device = 0;
  sample.t = 0.5;
  trace.memory.push_back(sample);

  StepMetrics first;
  first.step = 0;
  first.t_end = 8.0;
  first.loss = 2.25;
  trace.steps.push_back(first);
  StepMetrics second;  // loss unknown: NaN must not reach the file
  second.step = 1;
  second.t_end = 16.0;
  second.accuracy = 0.5;
  trace.steps.push_back(second);
  return trace;
}

TEST(ChromeTrace, HasTheTopLevelShapeViewersExpect) {
  const json document = export_and_parse(make_two_device_trace());
  ASSERT_TRUE(document.is_object());
  EXPECT_EQ(document.at("displayTimeUnit"), "ms");
  ASSERT_TRUE(document.at("traceEvents").is_array());
  const json& metadata = document.at("metadata");
  EXPECT_EQ(metadata.at("source"), "measured");
  EXPECT_EQ(metadata.at("schedule"), "gpipe");
  EXPECT_EQ(metadata.at("time_unit"), "s");
  EXPECT_DOUBLE_EQ(metadata.at("microseconds_per_time_unit").get<double>(), 1e6);
  EXPECT_DOUBLE_EQ(metadata.at("bubble_fraction").get<double>(),
                   bubble_fraction(make_two_device_trace()));
  // Every event names its phase, process and thread.
  for (const json& event : document.at("traceEvents")) {
    EXPECT_TRUE(event.contains("ph") && event.contains("pid") && event.contains("tid")) << event;
  }
}

TEST(ChromeTrace, OneNamedProcessPerDeviceWithComputeAndCommunicationThreads) {
  const Trace trace = make_two_device_trace();
  const json document = export_and_parse(trace);
  const auto process_names = events_with(document, "M", "process_name");
  ASSERT_EQ(process_names.size(), trace.devices.size());
  for (const DeviceInfo& info : trace.devices) {
    bool found = false;
    for (const json& event : process_names) {
      if (event.at("pid") == chrome_pid(info.device)) {
        EXPECT_EQ(event.at("args").at("name"), info.label);
        found = true;
      }
    }
    EXPECT_TRUE(found) << "no process_name for device " << info.device;
  }
  EXPECT_EQ(events_with(document, "M", "process_sort_index").size(), trace.devices.size());

  const auto thread_names = events_with(document, "M", "thread_name");
  ASSERT_EQ(thread_names.size(), 2 * trace.devices.size());
  for (const json& event : thread_names) {
    const int pid = event.at("pid");
    const int device = pid - 1;
    const std::string name = event.at("args").at("name");
    if (event.at("tid") == chrome_compute_tid(device)) {
      EXPECT_EQ(name, "compute");
    } else {
      EXPECT_EQ(event.at("tid"), chrome_communication_tid(device));
      EXPECT_EQ(name, "communication");
    }
  }
  // Perfetto keys threads by tid alone, so no two devices may share one.
  EXPECT_NE(chrome_compute_tid(0), chrome_compute_tid(1));
  EXPECT_NE(chrome_communication_tid(0), chrome_compute_tid(0));
}

TEST(ChromeTrace, EachOpIsACompleteEventInMicroseconds) {
  const Trace trace = make_two_device_trace();
  const json document = export_and_parse(trace);
  std::vector<json> op_events;
  for (const json& event : events_with(document, "X")) {
    if (event.at("cat") != "bubble") op_events.push_back(event);
  }
  ASSERT_EQ(op_events.size(), trace.events.size());
  // Events come out in trace order.
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const TraceEvent& expected = trace.events[i];
    const json& event = op_events[i];
    EXPECT_EQ(event.at("name"), op_label(expected.op));
    EXPECT_EQ(event.at("cat"), op_kind_name(expected.op.kind));
    EXPECT_EQ(event.at("pid"), chrome_pid(expected.device));
    const int tid = is_compute(expected.op.kind) ? chrome_compute_tid(expected.device)
                                                 : chrome_communication_tid(expected.device);
    EXPECT_EQ(event.at("tid"), tid);
    EXPECT_NEAR(event.at("ts").get<double>(), expected.t_begin * 1e6, 1e-3);
    EXPECT_NEAR(event.at("dur").get<double>(), (expected.t_end - expected.t_begin) * 1e6, 1e-3);
    const json& args = event.at("args");
    EXPECT_EQ(args.at("kind"), op_kind_name(expected.op.kind));
    EXPECT_EQ(args.at("stage"), expected.op.stage);
    EXPECT_EQ(args.at("microbatch"), expected.op.microbatch);
    EXPECT_EQ(args.at("bytes"), expected.bytes);
    for (const char* key : {"chunk", "step", "weight_version", "weight_delay", "peer", "layer"}) {
      EXPECT_TRUE(args.contains(key)) << key;
    }
  }
}

TEST(ChromeTrace, BubblesAreSlicesOnTheComputeThread) {
  const Trace trace = make_two_device_trace();
  const json document = export_and_parse(trace);
  const auto expected = find_bubbles(trace);
  const auto slices = events_with(document, "X", "bubble");
  ASSERT_EQ(slices.size(), expected.size());
  for (size_t i = 0; i < slices.size(); ++i) {
    EXPECT_EQ(slices[i].at("cat"), "bubble");
    EXPECT_EQ(slices[i].at("pid"), chrome_pid(expected[i].device));
    EXPECT_EQ(slices[i].at("tid"), chrome_compute_tid(expected[i].device));
    EXPECT_NEAR(slices[i].at("ts").get<double>(), expected[i].t_begin * 1e6, 1e-3);
    EXPECT_NEAR(slices[i].at("dur").get<double>(), (expected[i].t_end - expected[i].t_begin) * 1e6,
                1e-3);
  }
}

TEST(ChromeTrace, MemorySamplesBecomeCounters) {
  const Trace trace = make_trace_with_memory_and_steps();
  const json document = export_and_parse(trace);
  const auto memory = events_with(document, "C", "memory");
  const auto totals = events_with(document, "C", "memory total");
  const auto host = events_with(document, "C", "memory host");
  ASSERT_EQ(memory.size(), trace.memory.size());
  ASSERT_EQ(totals.size(), trace.memory.size());
  ASSERT_EQ(host.size(), trace.memory.size());
  for (size_t i = 0; i < memory.size(); ++i) {
    const MemorySample& sample = trace.memory[i];
    EXPECT_EQ(memory[i].at("pid"), chrome_pid(sample.device));
    EXPECT_NEAR(memory[i].at("ts").get<double>(), sample.t * 1e6, 1e-3);
    const json& args = memory[i].at("args");
    // The device's categories stack; host memory is a counter of its own.
    ASSERT_EQ(args.size(), static_cast<size_t>(kMemoryCategoryCount - 1));
    for (int category = 0; category < kMemoryCategoryCount; ++category) {
      const auto kind = static_cast<MemoryCategory>(category);
      const char* name = memory_category_name(kind);
      if (kind == MemoryCategory::Host)
        EXPECT_FALSE(args.contains(name));
      else
        EXPECT_EQ(args.at(name), sample.bytes[static_cast<size_t>(category)]) << name;
    }
    EXPECT_EQ(totals[i].at("args").at("bytes"), total_bytes(sample.bytes));
    EXPECT_EQ(host[i].at("args").at("bytes"), sample.bytes[static_cast<size_t>(MemoryCategory::Host)]);
  }
}

TEST(ChromeTrace, StepMetricsAreCountersAndGlobalInstantsWithoutNaN) {
  const Trace trace = make_trace_with_memory_and_steps();
  const json document = export_and_parse(trace);
  const auto loss = events_with(document, "C", "loss");
  ASSERT_EQ(loss.size(), 1u);  // step 1's loss is NaN: left out, not drawn as 0
  EXPECT_DOUBLE_EQ(loss[0].at("args").at("value").get<double>(), 2.25);
  EXPECT_NEAR(loss[0].at("ts").get<double>(), 8.0 * 1e6, 1e-3);
  ASSERT_EQ(events_with(document, "C", "accuracy").size(), 1u);

  const auto markers = events_with(document, "i");
  ASSERT_EQ(markers.size(), trace.steps.size());
  EXPECT_EQ(markers[1].at("name"), "step 1");
  EXPECT_EQ(markers[1].at("s"), "g");
  EXPECT_FALSE(markers[1].at("args").contains("loss"));
  EXPECT_DOUBLE_EQ(markers[1].at("args").at("accuracy").get<double>(), 0.5);

  // The metrics live in a "training" process after the devices.
  const auto process_names = events_with(document, "M", "process_name");
  ASSERT_EQ(process_names.size(), trace.devices.size() + 1);
  EXPECT_EQ(process_names.back().at("args").at("name"), "training");
  EXPECT_EQ(loss[0].at("pid"), process_names.back().at("pid"));
}

TEST(ChromeTrace, UnitCostTracesMapOneUnitToOneMillisecond) {
  Trace trace = make_two_device_trace();
  trace.source = "simulated";
  trace.time_unit = "unit";
  const json document = export_and_parse(trace);
  EXPECT_DOUBLE_EQ(document.at("metadata").at("microseconds_per_time_unit").get<double>(), 1000);
  EXPECT_NE(document.at("metadata").at("time_scale").get<std::string>().find("1000 us"),
            std::string::npos);
  const auto slices = events_with(document, "X");
  const json& first = slices.at(0);  // F0 on device 0, [0, 1] units
  EXPECT_DOUBLE_EQ(first.at("ts").get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(first.at("dur").get<double>(), 1000.0);
}

TEST(ChromeTrace, EscapesLabelsAndWritesNaNAsNull) {
  Trace trace;  // no events: bubble fraction is NaN
  trace.schedule = "quote \" backslash \\ newline \n tab \t bell \a end";
  DeviceInfo info;
  info.device = 0;
  info.label = "device 0 · stage \"0\"";
  trace.devices.push_back(info);
  const json document = export_and_parse(trace);
  EXPECT_EQ(document.at("metadata").at("schedule"), trace.schedule);
  EXPECT_TRUE(document.at("metadata").at("bubble_fraction").is_null());
  const auto process_names = events_with(document, "M", "process_name");
  ASSERT_EQ(process_names.size(), 1u);
  EXPECT_EQ(process_names[0].at("args").at("name"), info.label);
}

TEST(ChromeTrace, NonFiniteTimesStillGiveValidJson) {
  Trace trace = make_two_device_trace();
  trace.memory.push_back(MemorySample{});
  trace.memory.back().t = std::numeric_limits<double>::infinity();
  StepMetrics step;
  step.t_end = std::numeric_limits<double>::quiet_NaN();
  step.samples_per_s = std::numeric_limits<double>::infinity();
  trace.steps.push_back(step);
  EXPECT_NO_THROW(export_and_parse(trace));
}

}  // namespace
}  // namespace pipelab
