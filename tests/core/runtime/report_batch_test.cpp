#include "core/runtime/report_batch.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

namespace pipelab {
namespace {

// Keeps what it is told, for comparison.
struct KeptReports : RunReporter {
  std::vector<TraceEvent> events;
  std::vector<MemorySample> memory_samples;
  std::vector<double> loss_sums;
  std::vector<std::tuple<int, int, int, int>> routed_where;  // step, replica, micro-batch, layer
  std::vector<MicrobatchRouting> routings;
  std::vector<int> finished;
  std::vector<std::string> messages;
  void event(const TraceEvent& e) override { events.push_back(e); }
  void memory(const MemorySample& s) override { memory_samples.push_back(s); }
  void loss(int step, int, int, const LossResult& r) override {
    loss_sums.push_back(r.loss_sum + step);
  }
  void expert_load(int step, int replica, int microbatch, int layer,
                   const MicrobatchRouting& routing) override {
    routed_where.emplace_back(step, replica, microbatch, layer);
    routings.push_back(routing);
  }
  void device_finished_step(int step) override { finished.push_back(step); }
  void message(const std::string& text) override { messages.push_back(text); }
};

TEST(ReportBatch, ReplaysEveryReportInOrderOnTheGivenClock) {
  ReportBatch batch;
  TraceEvent event;
  event.device = 3;
  event.op.kind = OpKind::Backward;
  event.op.microbatch = 2;
  event.t_begin = 1.0;
  event.t_end = 1.5;
  event.bytes = 77;
  batch.event(event);
  MemorySample sample;
  sample.device = 3;
  sample.t = 2.0;
  sample.bytes[1] = 1234;
  batch.memory(sample);
  LossResult loss;
  loss.loss_sum = 0.1234567890123;
  batch.loss(4, 1, 0, loss);
  batch.expert_load(4, 1, 2, 5, {{7, 0, 9}, {1, 0, 3}, 0.0123456789});
  batch.device_finished_step(4);
  batch.message("hello");

  std::vector<char> bytes = batch.take();
  EXPECT_TRUE(batch.take().empty()) << "take empties the batch";
  KeptReports kept;
  replay_reports(bytes.data(), bytes.size(), kept, [](double t) { return t + 10; });
  ASSERT_EQ(kept.events.size(), 1u);
  EXPECT_EQ(kept.events[0].device, 3);
  EXPECT_EQ(kept.events[0].op.kind, OpKind::Backward);
  EXPECT_EQ(kept.events[0].bytes, 77);
  EXPECT_EQ(kept.events[0].t_begin, 11.0);
  EXPECT_EQ(kept.events[0].t_end, 11.5);
  ASSERT_EQ(kept.memory_samples.size(), 1u);
  EXPECT_EQ(kept.memory_samples[0].t, 12.0);
  EXPECT_EQ(kept.memory_samples[0].bytes[1], 1234);
  ASSERT_EQ(kept.loss_sums.size(), 1u);
  EXPECT_EQ(kept.loss_sums[0], 0.1234567890123 + 4) << "the loss travels bit for bit";
  ASSERT_EQ(kept.routings.size(), 1u);
  EXPECT_EQ(kept.routed_where[0], std::make_tuple(4, 1, 2, 5));
  EXPECT_EQ(kept.routings[0].routed, (std::vector<int64_t>{7, 0, 9}));
  EXPECT_EQ(kept.routings[0].dropped, (std::vector<int64_t>{1, 0, 3}));
  EXPECT_EQ(kept.routings[0].aux_loss, 0.0123456789);
  EXPECT_EQ(kept.finished, std::vector<int>{4});
  EXPECT_EQ(kept.messages, std::vector<std::string>{"hello"});

  // Cut short: an error, not a crash.
  KeptReports partial;
  EXPECT_THROW(replay_reports(bytes.data(), bytes.size() - 1, partial, [](double t) { return t; }),
               std::runtime_error);
}

}  // namespace
}  // namespace pipelab
