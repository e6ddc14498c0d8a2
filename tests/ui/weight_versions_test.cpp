// Asynchronous schedules draw each op's weight version on its bar (a "v2" in
// the label and a colour strip) and explain it in the legend; synchronous
// ones do not.
#include <QtTest>

#include "core/schedule/lowering.h"
#include "core/sim/simulator.h"
#include "ui/timeline/op_colors.h"
#include "ui/timeline/timeline_chart.h"
#include "ui/timeline/timeline_plottable.h"
#include "ui_test_support.h"

using namespace pipelab;

namespace {

Trace simulated(ScheduleKind kind) {
  ParallelPlan plan;
  plan.schedule = kind;
  plan.pp = 4;
  plan.microbatches = 4;
  return simulate(build_schedule(plan), CostModel::unit(UnitCosts{})).trace;
}

// Draws the chart once, as the screen or an export would.
void paint(TimelineChart& chart) {
  chart.resize(1400, 400);
  chart.fitAll();
  chart.toPixmap(1400, 400);
}

}  // namespace

class WeightVersionsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::use_test_settings(); }

  void labelsCarryTheVersionAnOpReadsOrWrites() {
    Op forward;
    forward.kind = OpKind::Forward;
    forward.microbatch = 3;
    forward.weight_version = 2;
    QCOMPARE(bar_label(forward), QStringLiteral("3"));
    QCOMPARE(bar_label(forward, true), QStringLiteral("3 v2"));
    Op update;
    update.kind = OpKind::Update;
    update.weight_version = 5;
    QCOMPARE(bar_label(update, true), QStringLiteral("U v5"));
    Op send;
    send.kind = OpKind::SendActivation;
    send.microbatch = 1;
    QVERIFY(bar_label(send, true).isEmpty());
    QVERIFY(weight_version_color(1) != weight_version_color(2));
  }

  void asynchronousSchedulesDrawVersionStrips() {
    for (ScheduleKind kind :
         {ScheduleKind::PipeDream, ScheduleKind::PipeDream2BW, ScheduleKind::PipeMare}) {
      TimelineChart chart;
      const int legend_without = [] {
        TimelineChart sync_chart;
        sync_chart.showTrace(simulated(ScheduleKind::OneFOneB));
        return sync_chart.legend->itemCount();
      }();
      const Trace trace = simulated(kind);
      chart.showTrace(trace);
      QVERIFY2(chart.bars()->weightVersionsShown(), schedule_name(kind));
      paint(chart);
      QVERIFY2(chart.bars()->lastDrawnVersionStripCount() > 0, schedule_name(kind));
      // The legend gains the entry that explains the strips.
      QVERIFY2(chart.legend->itemCount() > legend_without, schedule_name(kind));
      // Versions really differ along a device's row: each U makes a new one.
      int highest = 0;
      for (const TraceEvent& event : trace.events)
        if (has_weight_version(event.op)) highest = std::max(highest, event.op.weight_version);
      QVERIFY2(highest > 0, schedule_name(kind));
    }
  }

  void asynchronousDataParallelDrawsThePulledVersions() {
    ParallelPlan plan;
    plan.schedule = ScheduleKind::OneFOneB;
    plan.dp = 4;
    plan.microbatches = 1;
    plan.update = UpdateMode::Async;
    plan.staleness = 2;
    const Trace trace = simulate(build_schedule(plan), CostModel::unit(UnitCosts{})).trace;
    int highest = 0;
    for (const TraceEvent& event : trace.events)
      if (event.op.kind == OpKind::Forward) highest = std::max(highest, event.op.weight_version);
    QVERIFY(highest > 0);  // later steps compute on pulled versions

    TimelineChart chart;
    chart.showTrace(trace);
    QVERIFY(chart.bars()->weightVersionsShown());
    paint(chart);
    QVERIFY(chart.bars()->lastDrawnVersionStripCount() > 0);

    // A live run: the strips appear with the first pull.
    TimelineChart live;
    Trace start = trace;
    start.events.clear();
    live.showTrace(start);
    QVERIFY(!live.bars()->weightVersionsShown());
    live.appendEvents(trace.events);
    QVERIFY(live.bars()->weightVersionsShown());
  }

  void synchronousSchedulesDoNot() {
    for (ScheduleKind kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB}) {
      TimelineChart chart;
      chart.showTrace(simulated(kind));
      QVERIFY(!chart.bars()->weightVersionsShown());
      paint(chart);
      QVERIFY(chart.bars()->lastDrawnBarCount() > 0);
      QCOMPARE(chart.bars()->lastDrawnVersionStripCount(), 0);
    }
  }
};

QTEST_MAIN(WeightVersionsTest)
#include "weight_versions_test.moc"
