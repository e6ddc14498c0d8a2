#include "core/trace/csv_export.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "tests/core/trace/trace_test_helpers.h"

namespace pipelab {
namespace {

using test::make_two_device_trace;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream stream(text);
  while (std::getline(stream, part, separator)) parts.push_back(part);
  // getline drops a trailing empty field; keep it so empty last cells count.
  if (!text.empty() && text.back() == separator) parts.push_back("");
  return parts;
}

std::vector<std::string> lines_of(const std::string& text) { return split(text, '\n'); }

// Trailing newline gives one empty "line" at the end; drop it.
std::vector<std::string> rows_of(const std::string& text) {
  auto lines = lines_of(text);
  EXPECT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(), "") << "CSV should end with a newline";
  lines.pop_back();
  return lines;
}

TEST(EventsCsv, HeaderAndOneRowPerEvent) {
  const Trace trace = make_two_device_trace();
  std::ostringstream out;
  write_events_csv(trace, out);
  const auto rows = rows_of(out.str());
  ASSERT_EQ(rows.size(), trace.events.size() + 1);
  EXPECT_EQ(rows[0],
            "device,kind,stage,chunk,microbatch,step,weight_version,weight_delay,peer,t_begin,t_end,duration,"
            "bytes");
  // The send on device 0: [2, 2.5] seconds, 4096 bytes.
  const TraceEvent& send = trace.events[2];
  ASSERT_EQ(send.op.kind, OpKind::SendActivation);
  const auto cells = split(rows[3], ',');
  ASSERT_EQ(cells.size(), 13u);
  EXPECT_EQ(cells[0], "0");
  EXPECT_EQ(cells[1], op_kind_name(OpKind::SendActivation));
  EXPECT_EQ(cells[4], "0");  // micro-batch
  EXPECT_DOUBLE_EQ(std::stod(cells[9]), 2.0);
  EXPECT_DOUBLE_EQ(std::stod(cells[10]), 2.5);
  EXPECT_DOUBLE_EQ(std::stod(cells[11]), 0.5);
  EXPECT_EQ(cells[12], "4096");
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(split(rows[i], ',').size(), 13u) << rows[i];
}

TEST(MemoryCsv, OneColumnPerCategoryAndATotal) {
  Trace trace;
  MemorySample sample;
  sample.device = 3;
  sample.t = 0.125;
  int64_t total = 0;
  for (int category = 0; category < kMemoryCategoryCount; ++category) {
    sample.bytes[static_cast<size_t>(category)] = (int64_t{1} << 33) + category;
    if (category != static_cast<int>(MemoryCategory::Host)) total += sample.bytes[static_cast<size_t>(category)];
  }
  trace.memory = {sample, sample};
  std::ostringstream out;
  write_memory_csv(trace, out);
  const auto rows = rows_of(out.str());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0],
            "device,t,weights,gradients,optimizer_state,activations,stashed_weights,"
            "comm_buffers,workspace,host,total");
  const auto cells = split(rows[1], ',');
  ASSERT_EQ(cells.size(), static_cast<size_t>(kMemoryCategoryCount + 3));
  EXPECT_EQ(cells[0], "3");
  EXPECT_EQ(cells[1], "0.125");
  EXPECT_EQ(cells[2], std::to_string(sample.bytes[0]));
  EXPECT_EQ(cells.back(), std::to_string(total));
}

TEST(StepsCsv, NaNMetricsAreEmptyCells) {
  Trace trace;
  StepMetrics step;
  step.step = 4;
  step.t_end = 1.5;
  step.loss = 0.75;
  step.step_time_s = 0.25;
  step.samples_per_s = 512;
  // accuracy, val_loss, val_accuracy and both bubbles stay NaN.
  trace.steps.push_back(step);
  std::ostringstream out;
  write_steps_csv(trace, out);
  const auto rows = rows_of(out.str());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0],
            "step,t_end,loss,accuracy,val_loss,val_accuracy,step_time_s,samples_per_s,"
            "bubble_measured,bubble_simulated");
  EXPECT_EQ(rows[1], "4,1.5,0.75,,,,0.25,512,,");
}

TEST(StepsCsv, NumbersAreWrittenInFullWithoutExponents) {
  Trace trace;
  StepMetrics step;
  step.t_end = 0.000012;
  step.loss = 1.0 / 3.0;
  trace.steps.push_back(step);
  std::ostringstream out;
  out.precision(2);  // the writer must not depend on the stream's settings
  write_steps_csv(trace, out);
  const auto cells = split(rows_of(out.str())[1], ',');
  EXPECT_EQ(cells[1], "0.000012");
  EXPECT_EQ(std::stod(cells[2]), 1.0 / 3.0);  // round-trips exactly
}

class ExportFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    folder_ = std::filesystem::temp_directory_path() /
              (std::string("pipelab_trace_export_") + info->name());
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  static std::string read(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::filesystem::path folder_;
};

TEST_F(ExportFiles, WritesTheChromeTraceAndThreeTables) {
  const Trace trace = make_two_device_trace();
  const auto json_path = folder_ / "run.json";
  const auto prefix = (folder_ / "run").string();
  std::string error;
  ASSERT_TRUE(export_trace_files(trace, json_path.string(), prefix, &error)) << error;
  EXPECT_TRUE(error.empty());
  EXPECT_NE(read(json_path).find("\"traceEvents\""), std::string::npos);
  EXPECT_EQ(rows_of(read(prefix + "_events.csv")).size(), trace.events.size() + 1);
  EXPECT_EQ(rows_of(read(prefix + "_memory.csv")).size(), 1u);  // header only
  EXPECT_EQ(rows_of(read(prefix + "_steps.csv")).size(), 1u);
}

TEST_F(ExportFiles, EmptyPathsSkipThatPart) {
  const auto prefix = (folder_ / "only_csv").string();
  std::string error;
  ASSERT_TRUE(export_trace_files(make_two_device_trace(), "", prefix, &error)) << error;
  EXPECT_TRUE(std::filesystem::exists(prefix + "_events.csv"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(folder_),
                          std::filesystem::directory_iterator()),
            3);
}

TEST_F(ExportFiles, AMissingFolderIsReportedByPath) {
  const auto json_path = (folder_ / "no_such_folder" / "run.json").string();
  std::string error;
  EXPECT_FALSE(export_trace_files(make_two_device_trace(), json_path, "", &error));
  EXPECT_NE(error.find(json_path), std::string::npos) << error;

  const auto prefix = (folder_ / "no_such_folder" / "run").string();
  error.clear();
  EXPECT_FALSE(export_trace_files(make_two_device_trace(), "", prefix, &error));
  EXPECT_NE(error.find(prefix + "_events.csv"), std::string::npos) << error;
  // A null error pointer is allowed.
  EXPECT_FALSE(export_trace_files(make_two_device_trace(), json_path, "", nullptr));
}

}  // namespace
}  // namespace pipelab
