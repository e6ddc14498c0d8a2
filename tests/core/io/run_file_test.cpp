#include "core/io/run_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "core/io/experiment_io.h"

namespace pipelab {
namespace {

// A small run with every kind of record, values chosen to catch swapped columns.
RunRecord sample_run() {
  RunRecord run;
  run.name = "2 · 1f1b · \"quoted\" run";
  run.experiment = default_experiment();
  run.experiment.parallel.microbatches = 4;
  Trace& trace = run.trace;
  trace.source = "measured";
  trace.schedule = "1f1b";
  trace.devices = describe_devices(1, 1, 2, 1);
  TraceEvent event;
  event.device = 1;
  event.op = Op{OpKind::AllReduce, 1, 3, 1, 2, 4, 5, 6, 0, CommGroup::DataParallel, 7, 8192};
  event.t_begin = 0.125;
  event.t_end = 0.1250000001;
  event.bytes = 4096;
  trace.events.push_back(event);
  event.op = Op{};
  event.op.kind = OpKind::Forward;
  event.device = event.op.device = 0;
  trace.events.push_back(event);
  MemorySample sample;
  sample.device = 1;
  sample.t = 0.5;
  for (int c = 0; c < kMemoryCategoryCount; ++c) sample.bytes[c] = 1000 + c;
  trace.memory.push_back(sample);
  StepMetrics step;
  step.step = 0;
  step.t_end = 0.75;
  step.loss = 2.3;
  step.step_time_s = 0.75;
  trace.steps.push_back(step);  // accuracy, validation and bubbles stay NaN
  step.step = 1;
  step.aux_loss = 0.015625;
  step.expert_load = {{2, {30, 0, 34}, {4, 0, 1}}, {5, {10, 11, 12}, {0, 0, 0}}};
  trace.steps.push_back(step);  // a step with moe layers
  return run;
}

bool same_op(const Op& a, const Op& b) {
  return a.kind == b.kind && a.device == b.device && a.stage == b.stage && a.chunk == b.chunk &&
         a.microbatch == b.microbatch && a.step == b.step && a.weight_version == b.weight_version &&
         a.weight_delay == b.weight_delay && a.peer == b.peer && a.group == b.group &&
         a.layer == b.layer && a.bytes == b.bytes;
}

TEST(RunFile, RoundTripsEverything) {
  const RunRecord run = sample_run();
  const RunRecord back = parse_run(run_to_json(run));
  EXPECT_EQ(back.name, run.name);
  EXPECT_EQ(experiment_to_json(back.experiment), experiment_to_json(run.experiment));
  EXPECT_EQ(back.trace.source, "measured");
  EXPECT_EQ(back.trace.schedule, "1f1b");
  ASSERT_EQ(back.trace.devices.size(), 2u);
  EXPECT_EQ(back.trace.devices[1].label, run.trace.devices[1].label);
  EXPECT_EQ(back.trace.devices[1].stages, run.trace.devices[1].stages);
  ASSERT_EQ(back.trace.events.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.trace.events[i].device, run.trace.events[i].device);
    EXPECT_TRUE(same_op(back.trace.events[i].op, run.trace.events[i].op)) << i;
    EXPECT_EQ(back.trace.events[i].t_begin, run.trace.events[i].t_begin);  // exact
    EXPECT_EQ(back.trace.events[i].t_end, run.trace.events[i].t_end);
    EXPECT_EQ(back.trace.events[i].bytes, run.trace.events[i].bytes);
  }
  ASSERT_EQ(back.trace.memory.size(), 1u);
  EXPECT_EQ(back.trace.memory[0].bytes, run.trace.memory[0].bytes);
  EXPECT_EQ(back.trace.memory[0].t, 0.5);
  ASSERT_EQ(back.trace.steps.size(), 2u);
  EXPECT_EQ(back.trace.steps[0].loss, 2.3);
  EXPECT_TRUE(std::isnan(back.trace.steps[0].accuracy));
  EXPECT_TRUE(std::isnan(back.trace.steps[0].bubble_measured));
  EXPECT_TRUE(std::isnan(back.trace.steps[0].aux_loss));
  EXPECT_TRUE(back.trace.steps[0].expert_load.empty());
  EXPECT_EQ(back.trace.steps[1].aux_loss, 0.015625);
  ASSERT_EQ(back.trace.steps[1].expert_load.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const ExpertLoad& load = back.trace.steps[1].expert_load[i];
    const ExpertLoad& saved = run.trace.steps[1].expert_load[i];
    EXPECT_EQ(load.layer, saved.layer);
    EXPECT_EQ(load.routed, saved.routed);
    EXPECT_EQ(load.dropped, saved.dropped);
  }
}

TEST(RunFile, SavesAndLoadsAFile) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "pipelab_run_file_test.json").string();
  save_run(sample_run(), path);
  EXPECT_EQ(load_run(path).trace.events.size(), 2u);
  EXPECT_TRUE(starts_as_run_file(path));
  std::filesystem::remove(path);
}

TEST(RunFile, AnExperimentOrAMissingFileDoesNotStartAsARun) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string experiment = (dir / "pipelab_run_file_test_experiment.json").string();
  save_experiment(default_experiment(), experiment);
  EXPECT_FALSE(starts_as_run_file(experiment));
  const std::string tiny = (dir / "pipelab_run_file_test_tiny.json").string();
  std::ofstream(tiny) << "{";
  EXPECT_FALSE(starts_as_run_file(tiny));
  EXPECT_FALSE(starts_as_run_file((dir / "pipelab_no_such_run.json").string()));
  std::filesystem::remove(experiment);
  std::filesystem::remove(tiny);
}

// Each malformed text is refused with a message that says what is wrong.
TEST(RunFile, ARunTooLargeToOpenAgainIsNotSaved) {
  // Every run file PipeLab writes opens again: one past the limit is refused
  // before anything is written, with what to do instead.
  EXPECT_EQ(run_file_size_problem(kMaxRunFileBytes, 7'855'200, 16'589'520), "");
  const std::string problem =
      run_file_size_problem(kMaxRunFileBytes + (size_t{300} << 20), 7'855'200, 16'589'520);
  EXPECT_NE(problem.find("this run (7.8 million events, 16.5 million memory samples) makes a 1324 MiB "
                         "file, more than the 1024 MiB a run file may take to open again"),
            std::string::npos)
      << problem;
  EXPECT_NE(problem.find("Chrome trace or CSV"), std::string::npos);
}

TEST(RunFile, RefusesMalformedFilesWithAMessage) {
  const std::string good = run_to_json(sample_run());
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  const std::pair<std::string, std::string> cases[] = {
      {"", "not valid JSON"},
      {"{\"name\": 1", "not valid JSON"},
      {"[1, 2]", "not a PipeLab run file"},
      {R"({"format": "pipelab-run", "version": 7})", "version 7"},
      {replaced("\"ALLREDUCE\"", "\"XYZ\""), "is not an op kind"},
      {replaced("\"version\": 1", "\"version\": \"one\""), "version"},
      {replaced("[\"device\",\"kind\"", "[\"kind\",\"device\""), "event_columns"},
      {replaced("\"steps\": [", "\"steps\": [{\"step\": 1}, "), "t_end"},
      {replaced("\"trace\": {", "\"trace\": {\"extra\": 1, "), "unknown key"},
      {replaced("\"dropped\":[4,0,1]", "\"dropped\":[4,0]"), "3 routed counts but 2 dropped"},
      {replaced("\"routed\":[30,0,34]", "\"routed\":[30,\"x\",34]"), "expert_load[0].routed"},
      {replaced("\"experiment\": {", "\"experiment\": {\"bogus\": 1, "), "experiment: unknown key"},
      {replaced("[1,\"ALLREDUCE\"", "[-1,\"ALLREDUCE\""), "not a device id"},
      {replaced("[1,\"ALLREDUCE\"", "[1,\"ALLREDUCE\",1"), "must be an array of 15 values"},
      {replaced("[1,0.5,1000", "[1,0.5,-1000"), "memory[0][2] = -1000 is not a byte count"},
      {replaced("[1,0.5,1000", "[1,0.5,9007199254740993"), "is not a byte count (0 to 2^53)"},
      {std::string(100, '['), "nested"},
  };
  for (const auto& [text, expected] : cases) {
    try {
      parse_run(text);
      ADD_FAILURE() << "accepted: " << text.substr(0, 80);
    } catch (const RunFileError& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos)
          << "expected '" << expected << "' in: " << error.what();
    }
  }
}

// The fuzz target's seeds (tests/fuzz/make_corpus.py) are runs it accepts,
// so fuzzing starts from inside the format, the MoE one's expert load too.
std::string parse_error(const RunRecord& run) {
  try {
    parse_run(run_to_json(run));
  } catch (const RunFileError& error) {
    return error.what();
  }
  return "";
}

// What the live view refuses in a stream, a run file may not hold either.
TEST(RunFile, RefusesWhatContradictsItsExperimentWithTheReason) {
  EXPECT_EQ(parse_error(sample_run()), "");
  RunRecord run = sample_run();
  run.trace.events[1].device = 7;
  EXPECT_NE(parse_error(run).find("trace.events[1] is on device 7, but the run has 2 (0 to 1)"), std::string::npos)
      << parse_error(run);
  run = sample_run();
  run.trace.memory[0].device = 2;
  EXPECT_NE(parse_error(run).find("trace.memory[0] is on device 2"), std::string::npos) << parse_error(run);
  run = sample_run();
  run.trace.devices.clear();
  EXPECT_NE(parse_error(run).find("trace.devices lists 0 devices, but the experiment's plan has 2"),
            std::string::npos)
      << parse_error(run);
  run = sample_run();
  std::swap(run.trace.devices[0], run.trace.devices[1]);
  EXPECT_NE(parse_error(run).find("trace.devices[0] is device 1"), std::string::npos) << parse_error(run);
  run = sample_run();
  run.experiment.parallel.tp = 0;
  EXPECT_NE(parse_error(run).find("experiment: parallel.tp"), std::string::npos) << parse_error(run);
}

TEST(RunFile, RefusesANameOrLabelNoWindowCouldShow) {
  RunRecord run = sample_run();
  run.trace.devices[1].label = std::string(size_t{1} << 20, 'x');
  EXPECT_NE(parse_error(run).find("trace.devices[1].label is 1048576 bytes long"), std::string::npos);
  run = sample_run();
  run.name = std::string(5000, 'n');
  EXPECT_NE(parse_error(run).find("name is 5000 bytes long"), std::string::npos);
  run = sample_run();
  run.trace.schedule = std::string(5000, 's');
  EXPECT_NE(parse_error(run).find("trace.schedule is 5000 bytes long"), std::string::npos);
}

TEST(RunFile, TheFuzzSeedsAreRunsThatReadBack) {
  const std::filesystem::path seeds =
      std::filesystem::path(PIPELAB_SOURCE_DIR) / "tests/fuzz/corpus/run_file_fuzz";
  int moe_steps = 0;
  for (const auto& entry : std::filesystem::directory_iterator(seeds)) {
    const RunRecord run = load_run(entry.path().string());
    EXPECT_FALSE(run.trace.events.empty()) << entry.path();
    const RunRecord again = parse_run(run_to_json(run));
    ASSERT_EQ(again.trace.steps.size(), run.trace.steps.size()) << entry.path();
    for (size_t s = 0; s < run.trace.steps.size(); ++s) {
      EXPECT_EQ(again.trace.steps[s].expert_load.size(), run.trace.steps[s].expert_load.size());
      moe_steps += run.trace.steps[s].expert_load.empty() ? 0 : 1;
    }
  }
  EXPECT_GT(moe_steps, 0) << "a seed with the moe layers' load";
}

TEST(RunFile, ALoadErrorNamesTheFile) {
  try {
    load_run("no/such/run.json");
    FAIL() << "a missing file was accepted";
  } catch (const RunFileError& error) {
    EXPECT_NE(std::string(error.what()).find("no/such/run.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace pipelab
