// The predicted timeline follows the editor: the split, pp and the
// micro-batch slider change it before any run.
#include <QSlider>
#include <QSpinBox>
#include <QtTest>
#include <algorithm>
#include <chrono>

#include "core/sim/experiment_prediction.h"
#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/prediction_updater.h"
#include "ui/panels/parallel_panel.h"
#include "ui/timeline/op_colors.h"
#include "ui/timeline/timeline_chart.h"
#include "ui/timeline/timeline_plottable.h"
#include "ui/timeline/timeline_view.h"
#include "ui_test_support.h"

using namespace pipelab;

namespace {

// Total duration of the predicted forward ops of stage 0: moves when the split moves.
double stage0_forward_time(const Prediction& prediction) {
  double total = 0;
  for (const TraceEvent& event : prediction.result.trace.events)
    if (event.op.kind == OpKind::Forward && event.op.stage == 0)
      total += event.t_end - event.t_begin;
  return total;
}

}  // namespace

class PredictedTimelineTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::use_test_settings(); }

  void startsWithThePredictionOfTheDefaultExperiment() {
    MainWindow window;
    auto prediction = window.predictor()->prediction();
    QVERIFY(prediction);
    TimelineChart* chart = window.timelineView()->predictedChart();
    QCOMPARE(chart->bars()->eventCount(), int(prediction->result.trace.events.size()));
    QCOMPARE(chart->rowCount(), window.document()->experiment().parallel.devices());
    QVERIFY(chart->title().contains("bubble"));
  }

  void changingPpRedrawsThePrediction() {
    MainWindow window;
    TimelineChart* chart = window.timelineView()->predictedChart();
    const int rows_before = chart->rowCount();
    window.parallelPanel()->ppSpin()->setValue(4);
    QCOMPARE(window.document()->experiment().parallel.pp, 4);
    QTRY_COMPARE(chart->rowCount(), 4);
    QVERIFY(rows_before != 4);
    QCOMPARE(chart->bars()->eventCount(),
             int(window.predictor()->prediction()->result.trace.events.size()));
  }

  void changingTheSplitChangesStageTimes() {
    MainWindow window;
    ExperimentDocument* document = window.document();
    window.predictor()->updateNow();
    const double balanced = stage0_forward_time(*window.predictor()->prediction());
    // Stage 0 takes only the first layer: its forwards get much shorter.
    document->edit([](Experiment& e) {
      e.parallel.partition = PartitionRule::Explicit;
      e.parallel.boundaries = {1};
    });
    QTRY_VERIFY(window.predictor()->prediction() &&
                stage0_forward_time(*window.predictor()->prediction()) < balanced * 0.9);
    const auto prediction = window.predictor()->prediction();
    QCOMPARE(window.timelineView()->predictedChart()->bars()->eventCount(),
             int(prediction->result.trace.events.size()));
  }

  void microbatchSliderUpdatesTimelineAndBubbleAtOnce() {
    MainWindow window;
    // Unit costs: the textbook picture, where more micro-batches always shrink the bubble.
    window.document()->edit([](Experiment& e) { e.simulation.profile = "unit"; });
    window.predictor()->updateNow();
    ParallelPanel* panel = window.parallelPanel();
    QSlider* slider = panel->microbatchSlider();
    const auto& choices = panel->microbatchChoices();
    QVERIFY(choices.size() >= 3);
    const int events_before = window.timelineView()->predictedChart()->bars()->eventCount();
    const double bubble_before = window.predictor()->prediction()->result.bubble_fraction;
    const int m_before = window.document()->experiment().parallel.microbatches;
    slider->setValue(slider->maximum());
    const int m_after = choices.back();
    QVERIFY(m_after > m_before);
    QCOMPARE(window.document()->experiment().parallel.microbatches, m_after);
    // Within the debounce (50 ms) plus one simulation.
    const auto start = std::chrono::steady_clock::now();
    QTRY_VERIFY_WITH_TIMEOUT(
        window.timelineView()->predictedChart()->bars()->eventCount() > events_before, 2000);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    QVERIFY(elapsed < std::chrono::milliseconds(1500));
    // More micro-batches fill the pipeline better.
    QVERIFY(window.predictor()->prediction()->result.bubble_fraction < bubble_before);
  }

  void impossibleSplitShowsProblemsAndClearsThePrediction() {
    MainWindow window;
    window.predictor()->updateNow();
    QCOMPARE(window.timelineView()->measuredChart()->rowCount(),
             2);  // the plan's rows, before a run
    window.document()->edit([](Experiment& e) { e.parallel.pp = 40; });
    window.predictor()->updateNow();
    QVERIFY(!window.predictor()->prediction());
    QVERIFY(!window.predictor()->problems().isEmpty());
    QCOMPARE(window.timelineView()->predictedChart()->bars()->eventCount(), 0);
    // No rows of the experiment before it (they named its devices).
    QCOMPARE(window.timelineView()->measuredChart()->rowCount(), 0);
    QCOMPARE(window.timelineView()->replayedChart()->rowCount(), 0);
    QVERIFY(window.timelineView()->predictedChart()->title().contains("problems"));
    // The run refuses to start and the window keeps going.
    QVERIFY(!window.startRun());
    QCOMPARE(window.runController()->phase(), RunController::Phase::Idle);
  }

  void tensOfThousandsOfBarsDrawOnlyWhatIsVisible() {
    TimelineChart chart;
    chart.resize(1200, 400);
    Trace trace;
    trace.time_unit = "unit";
    const int devices = 4;
    const int per_device = 12500;  // 50 000 ops
    for (int device = 0; device < devices; ++device) {
      for (int i = 0; i < per_device; ++i) {
        TraceEvent event;
        event.device = device;
        event.op.kind = i % 2 ? OpKind::Backward : OpKind::Forward;
        event.op.microbatch = i;
        event.op.device = device;
        event.t_begin = i + 0.1 * device;
        event.t_end = event.t_begin + 0.8;
        trace.events.push_back(event);
      }
    }
    chart.showTrace(trace);
    QCOMPARE(chart.bars()->eventCount(), devices * per_device);
    chart.fitAll();
    QElapsedTimer timer;
    timer.start();
    chart.replot();
    const qint64 zoomed_out_ms = timer.elapsed();
    // Zoomed out, at most about one bar per pixel column and lane is drawn.
    QVERIFY(chart.bars()->lastDrawnBarCount() <= devices * 2 * (chart.width() + 2));
    QVERIFY(chart.bars()->lastDrawnBarCount() > 0);
    QVERIFY2(zoomed_out_ms < 500, qPrintable(QString::number(zoomed_out_ms)));
    // Zoomed in, only the visible ones.
    chart.showTimeRange(100, 110);
    chart.replot();
    QVERIFY(chart.bars()->lastDrawnBarCount() <= devices * 12);
    QVERIFY(chart.bars()->lastDrawnBarCount() >= devices * 9);
  }

  void barsAPixelHighKeepTheirOpsColour() {
    // 128 devices in a chart 200 pixels high: each row a pixel or so. Their
    // bars' white outlines had turned the whole chart pale.
    TimelineChart chart;
    chart.resize(800, 200);
    Trace trace;
    trace.time_unit = "unit";
    const int devices = 128;
    for (int device = 0; device < devices; ++device) {
      TraceEvent event;
      event.device = device;
      event.op.kind = OpKind::Backward;
      event.op.device = device;
      event.t_begin = 0;
      event.t_end = 100;
      trace.events.push_back(event);
    }
    chart.showTrace(trace);
    chart.fitAll();
    const QImage image = chart.toPixmap(800, 200).toImage();
    const QRect plot = chart.axisRect()->rect();
    const QColor want = op_color(OpKind::Backward);
    int off = 0, sampled = 0;
    for (int y = plot.top() + plot.height() / 4; y < plot.bottom() - plot.height() / 4;
         ++y, ++sampled) {
      const QColor got = image.pixelColor(plot.center().x(), y);
      const int distance = std::abs(got.red() - want.red()) + std::abs(got.green() - want.green()) +
                           std::abs(got.blue() - want.blue());
      if (distance > 60) ++off;
    }
    QVERIFY(sampled > 20);
    QVERIFY2(
        off <= sampled / 10,
        qPrintable(
            QStringLiteral("%1 of %2 pixels are not the backward's colour").arg(off).arg(sampled)));
  }

  void hoverFindsTheOpUnderTheMouse() {
    TimelineChart chart;
    chart.resize(800, 300);
    Trace trace;
    trace.time_unit = "unit";
    for (int i = 0; i < 3; ++i) {
      TraceEvent event;
      event.device = 1;
      event.op.kind = OpKind::Forward;
      event.op.microbatch = i;
      event.op.device = 1;
      event.t_begin = 2 * i;
      event.t_end = 2 * i + 1;
      trace.events.push_back(event);
    }
    TraceEvent other = trace.events[0];
    other.device = 0;
    other.op.device = 0;
    trace.events.push_back(other);
    chart.showTrace(trace);
    chart.showTimeRange(0, 6);
    chart.replot();
    TimelinePlottable* bars = chart.bars();
    // The middle of micro-batch 1's bar on device 1.
    const QPointF inside = bars->coordsToPixels(2.5, 1.0 - 0.1);
    const TraceEvent* hit = bars->eventAt(inside);
    QVERIFY(hit);
    QCOMPARE(hit->op.microbatch, 1);
    QCOMPARE(hit->device, 1);
    // A gap between bars holds nothing.
    QVERIFY(!bars->eventAt(bars->coordsToPixels(1.5, 1.0 - 0.1)));
    const QString text = describe_trace_event(*hit, true);
    QVERIFY(text.contains("micro-batch 1"));
    QVERIFY(text.contains("duration 1.00 units"));
    // The playback clock hides what has not happened yet.
    bars->setNow(1.5);
    QCOMPARE(bars->shownEventCount(), 2);  // micro-batch 0 on both devices
    QVERIFY(!bars->eventAt(inside));
  }
};

QTEST_MAIN(PredictedTimelineTest)
#include "predicted_timeline_test.moc"
