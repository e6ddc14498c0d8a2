#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>

#include "core/io/experiment_io.h"
#include "core/live/attached_run.h"
#include "core/live/live_frames.h"
#include "core/live/live_server.h"
#include "tests/support/runtime_test_support.h"

namespace pipelab {
namespace {

LiveHello hello_of(const Experiment& experiment) {
  LiveHello hello;
  hello.experiment_json = experiment_to_json(experiment);
  hello.steps_total = 7;
  return hello;
}

TEST(LiveStream, AViewerSeesTheRunFromItsStartToItsEnd) {
  const Experiment experiment =
      testing::with_plan(testing::small_experiment(), ScheduleKind::OneFOneB, 2, 4);
  LiveServer server(0, {"127.0.0.1"}, hello_of(experiment));
  EventBatch early;  // published before the viewer comes: it still gets it
  early.events.push_back({1, Op{}, 0.5, 0.75, 64});
  early.messages.push_back("launched");
  server.publish(early);

  EventSink sink;
  AttachedRun run("127.0.0.1:" + std::to_string(server.port()), sink);
  EXPECT_EQ(run.experiment().parallel.pp, 2);
  EXPECT_EQ(run.steps_total(), 7);
  run.start();
  EventBatch later;
  later.steps.push_back(StepMetrics{});
  later.steps.back().loss = 1.25;
  later.steps.back().aux_loss = 0.0625;
  later.steps.back().expert_load = {{3, {5, 6}, {0, 1}}};
  later.memory.push_back({1, 0.8, {}});
  server.publish(later);
  server.end(RunState::Finished, "");
  run.wait();
  EXPECT_EQ(run.state(), RunState::Finished) << run.error();
  EXPECT_EQ(run.steps_done(), 1);
  const EventBatch seen = sink.drain();
  ASSERT_EQ(seen.events.size(), 1u);
  EXPECT_EQ(seen.events[0].device, 1);
  EXPECT_EQ(seen.events[0].t_end, 0.75);
  ASSERT_EQ(seen.steps.size(), 1u);
  EXPECT_EQ(seen.steps[0].loss, 1.25);
  EXPECT_EQ(seen.steps[0].aux_loss, 0.0625);
  ASSERT_EQ(seen.steps[0].expert_load.size(), 1u);
  EXPECT_EQ(seen.steps[0].expert_load[0].layer, 3);
  EXPECT_EQ(seen.steps[0].expert_load[0].routed, (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(seen.steps[0].expert_load[0].dropped, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(seen.memory.size(), 1u);
  EXPECT_NE(std::find(seen.messages.begin(), seen.messages.end(), "launched"), seen.messages.end());
}

TEST(LiveStream, AViewerOutsideTheAllowListIsRefusedAndNoted) {
  LiveServer server(0, {"10.11.12.13"}, hello_of(testing::small_experiment()));
  EventSink sink;
  EXPECT_THROW(AttachedRun("127.0.0.1:" + std::to_string(server.port()), sink), std::runtime_error);
  std::vector<std::string> notes;
  for (int tries = 0; tries < 100 && notes.empty(); ++tries) {
    notes = server.take_notes();
    if (notes.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("refused a viewer from 127.0.0.1"), std::string::npos) << notes[0];
}

TEST(LiveStream, MistakesAreOneLineErrors) {
  EventSink sink;
  try {
    AttachedRun run("localhost", sink);
    FAIL() << "no port";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("HOST:PORT"), std::string::npos) << error.what();
  }
  EXPECT_THROW(LiveServer(0, {"not-an-address"}, hello_of(testing::small_experiment())),
               std::invalid_argument);
  EXPECT_EQ(split_allow_list("127.0.0.1,,10.0.0.2"),
            (std::vector<std::string>{"127.0.0.1", "10.0.0.2"}));
}

// A frame's payload, without its kind and size.
std::vector<char> payload_of(const std::vector<char>& frame) {
  return {frame.begin() + sizeof(LiveFrame) + sizeof(uint64_t), frame.end()};
}

std::string batch_problem(const EventBatch& batch, int devices) {
  const std::vector<char> payload = payload_of(live_batch_frame(batch));
  try {
    read_live_batch(payload.data(), payload.size(), devices);
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return "";
}

TEST(LiveStream, AViewerRefusesValuesItsViewsCannotDraw) {
  // The stream comes over the network: what the views index by is checked.
  EventBatch good;
  good.events.push_back({1, Op{}, 0.5, 0.75, 0});
  good.memory.push_back({1, 0.8, {}});
  EXPECT_EQ(batch_problem(good, 2), "");

  EventBatch batch = good;
  batch.events[0].device = 2;
  EXPECT_EQ(batch_problem(batch, 2),
            "the run sent an event on device 2, but its experiment has 2 devices");
  batch = good;
  batch.memory[0].device = -1;
  EXPECT_NE(batch_problem(batch, 2).find("a memory sample on device -1"), std::string::npos);
  batch = good;
  batch.memory[0].bytes[2] = int64_t{1} << 62;  // found by live_stream_fuzz: totals overflowed
  EXPECT_NE(batch_problem(batch, 2).find("a memory sample of 4611686018427387904 bytes"),
            std::string::npos);
  batch = good;
  batch.events[0].op.kind = static_cast<OpKind>(kOpKindCount);
  EXPECT_NE(batch_problem(batch, 2).find("which is not an op kind"), std::string::npos);
  batch = good;
  batch.events[0].op.group = static_cast<CommGroup>(7);
  EXPECT_NE(batch_problem(batch, 2).find("which is not a group"), std::string::npos);
  batch = good;
  batch.events[0].t_end = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(batch_problem(batch, 2).find("not a finite number"), std::string::npos);
  batch = good;
  batch.events[0].t_end = 0.25;
  EXPECT_NE(batch_problem(batch, 2).find("ends before it begins"), std::string::npos);
  batch = good;
  batch.steps.push_back(StepMetrics{});
  batch.steps.back().expert_load = {{0, {5, 6}, {1}}};
  EXPECT_NE(batch_problem(batch, 2).find("2 routed counts but 1 dropped"), std::string::npos);

  std::vector<char> cut = payload_of(live_batch_frame(good));
  cut.pop_back();
  EXPECT_THROW(read_live_batch(cut.data(), cut.size(), 2), std::runtime_error);

  std::string error;
  std::vector<char> end = payload_of(live_end_frame(static_cast<int32_t>(RunState::Failed), "diverged"));
  EXPECT_EQ(read_live_end(end.data(), end.size(), error), RunState::Failed);
  EXPECT_EQ(error, "diverged");
  end = payload_of(live_end_frame(static_cast<int32_t>(RunState::Running), ""));
  EXPECT_THROW(read_live_end(end.data(), end.size(), error), std::runtime_error);
}

TEST(LiveStream, ABadBatchEndsTheViewWithTheReason) {
  const Experiment experiment =
      testing::with_plan(testing::small_experiment(), ScheduleKind::OneFOneB, 2, 4);
  LiveServer server(0, {"127.0.0.1"}, hello_of(experiment));
  EventSink sink;
  AttachedRun run("127.0.0.1:" + std::to_string(server.port()), sink);
  run.start();
  EventBatch bad;
  bad.events.push_back({5, Op{}, 0.5, 0.75, 0});
  server.publish(bad);
  run.wait();
  EXPECT_EQ(run.state(), RunState::Failed);
  EXPECT_NE(run.error().find("an event on device 5, but its experiment has 2 devices"),
            std::string::npos)
      << run.error();
  EXPECT_TRUE(sink.drain().events.empty());
}

TEST(LiveStream, AnExperimentThatIsNotValidIsRefusedAtOnce) {
  Experiment experiment = testing::small_experiment();
  experiment.parallel.dp = -3;
  LiveServer server(0, {"127.0.0.1"}, hello_of(experiment));
  EventSink sink;
  try {
    AttachedRun run("127.0.0.1:" + std::to_string(server.port()), sink);
    FAIL() << "accepted an experiment with dp -3";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("the experiment it sent is not valid: "),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace pipelab
