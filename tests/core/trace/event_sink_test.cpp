#include "core/trace/event_sink.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace pipelab {
namespace {

TEST(EventSink, DrainReturnsEverythingInPushOrderAndEmptiesTheSink) {
  EventSink sink;
  for (int i = 0; i < 3; ++i) {
    TraceEvent event;
    event.op.microbatch = i;
    sink.add_event(event);
  }
  sink.add_memory(MemorySample{});
  StepMetrics step;
  step.step = 7;
  sink.add_step(step);
  sink.add_message("hello");

  EventBatch batch = sink.drain();
  ASSERT_EQ(batch.events.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(batch.events[static_cast<size_t>(i)].op.microbatch, i);
  EXPECT_EQ(batch.memory.size(), 1u);
  ASSERT_EQ(batch.steps.size(), 1u);
  EXPECT_EQ(batch.steps[0].step, 7);
  ASSERT_EQ(batch.messages.size(), 1u);
  EXPECT_EQ(batch.messages[0], "hello");
  EXPECT_TRUE(sink.drain().empty());
}

TEST(EventSink, StepsAndMessagesComeBackInTheOrderTheyWereAdded) {
  EventSink sink;
  sink.add_message("start");
  for (int i = 0; i < 3; ++i) {
    StepMetrics step;
    step.step = i;
    sink.add_step(step);
    if (i == 1) sink.add_message("summary of step 1");
  }
  sink.add_message("end");
  std::vector<std::string> order;
  for_each_in_order(
      sink.drain(), [&](const StepMetrics& step) { order.push_back("step " + std::to_string(step.step)); },
      [&](const std::string& message) { order.push_back(message); });
  EXPECT_EQ(order, (std::vector<std::string>{"start", "step 0", "step 1", "summary of step 1", "step 2", "end"}));

  // A batch rebuilt from a live stream has no places: its messages come first.
  EventBatch received;
  received.steps.resize(2);
  received.messages = {"from the stream"};
  order.clear();
  for_each_in_order(
      received, [&](const StepMetrics&) { order.push_back("step"); },
      [&](const std::string& message) { order.push_back(message); });
  EXPECT_EQ(order, (std::vector<std::string>{"from the stream", "step", "step"}));
}

TEST(EventSink, ConcurrentWritersAndOneReaderLoseNothing) {
  constexpr int kWriters = 4;
  constexpr int kEventsPerWriter = 5000;
  EventSink sink;
  std::atomic<int> writers_done{0};

  std::vector<std::thread> writers;
  for (int writer = 0; writer < kWriters; ++writer) {
    writers.emplace_back([&sink, &writers_done, writer] {
      for (int i = 0; i < kEventsPerWriter; ++i) {
        TraceEvent event;
        event.device = writer;
        event.op.microbatch = i;
        sink.add_event(event);
        if (i % 100 == 0) {
          MemorySample sample;
          sample.device = writer;
          sink.add_memory(sample);
        }
      }
      writers_done.fetch_add(1);
    });
  }

  // Drain while the writers are still pushing, the way the UI timer does.
  Trace trace;
  while (writers_done.load() < kWriters) append_batch(trace, sink.drain());
  for (std::thread& thread : writers) thread.join();
  append_batch(trace, sink.drain());

  ASSERT_EQ(trace.events.size(), static_cast<size_t>(kWriters * kEventsPerWriter));
  EXPECT_EQ(trace.memory.size(), static_cast<size_t>(kWriters * (kEventsPerWriter / 100)));
  // Each writer's events arrive in the order it pushed them.
  std::vector<int> next_microbatch(kWriters, 0);
  for (const TraceEvent& event : trace.events) {
    int& expected = next_microbatch[static_cast<size_t>(event.device)];
    EXPECT_EQ(event.op.microbatch, expected);
    expected = event.op.microbatch + 1;
  }
  for (int count : next_microbatch) EXPECT_EQ(count, kEventsPerWriter);
}

TEST(EventSink, AppendBatchAddsToWhatTheTraceHas) {
  Trace trace;
  trace.events.resize(2);
  EventBatch batch;
  batch.events.resize(3);
  batch.steps.resize(1);
  batch.messages.push_back("progress");
  append_batch(trace, batch);
  EXPECT_EQ(trace.events.size(), 5u);
  EXPECT_EQ(trace.steps.size(), 1u);
  EXPECT_TRUE(trace.memory.empty());
}

}  // namespace
}  // namespace pipelab
