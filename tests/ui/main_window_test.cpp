// The window as a user meets it: files, presets, unsaved changes, errors.
#include "ui/main_window.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QSettings>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QtTest>

#include "core/io/experiment_io.h"
#include "core/io/run_file.h"
#include "core/sim/experiment_prediction.h"
#include "ui/models/experiment_document.h"
#include "ui/models/prediction_updater.h"
#include "ui/models/presets.h"
#include "ui/models/problem_routing.h"
#include "ui/models/run_store.h"
#include "ui/panels/compare_view.h"
#include "ui/panels/data_panel.h"
#include "ui/panels/memory_view.h"
#include "ui/panels/overhead_view.h"
#include "ui/panels/parallel_panel.h"
#include "ui/panels/problem_label.h"
#include "ui/panels/training_view.h"
#include "ui/timeline/timeline_view.h"
#include "ui_test_support.h"

using namespace pipelab;

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    testing::use_test_settings();
    QSettings().clear();
  }

  void viewMenuFollowsTheShowCombo() {
    MainWindow window;
    QAction* measured_only = nullptr;
    for (QAction* action : window.findChildren<QAction*>())
      if (action->text() == QStringLiteral("Measured only")) measured_only = action;
    QVERIFY(measured_only);
    QVERIFY(!measured_only->isChecked());
    window.timelineView()->setArrangement(TimelineView::Arrangement::MeasuredOnly);
    QVERIFY(measured_only->isChecked());
    window.timelineView()->setArrangement(TimelineView::Arrangement::PredictedUnder);
    QVERIFY(!measured_only->isChecked());
  }

  void aFirstStartGivesTheChartsBelowTheTimelineRoomToRead() {
    QSettings().clear();  // no saved layout: the defaults apply
    MainWindow window;
    QVERIFY(window.applyPreset(QStringLiteral("1f1b-memory")));  // as `pipelab --preset` does
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto* memory = window.findChild<QDockWidget*>(QStringLiteral("memoryDock"));
    QVERIFY(memory);
    // Set before the window had its size, the docks kept about 200 pixels of
    // 950, and the memory chart's two panes showed no saw-tooth.
    QTRY_VERIFY2(memory->height() >= 300, qPrintable(QString::number(memory->height())));
    QVERIFY(window.timelineView()->height() >= 350);
    // The training view's legend sits above its axes, clear of the curves.
    QCustomPlot* plot = window.trainingView()->plot();
    plot->replot();
    QVERIFY(plot->legend->visible());
    QVERIFY(plot->legend->outerRect().bottom() <= plot->axisRect()->outerRect().top());
  }

  void theTrainingLegendTakesOneColumnWhereTwoDoNotFit() {
    TrainingView view;  // beside the expert load its dock may be this narrow
    view.resize(240, 300);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QCustomPlot* plot = view.plot();
    QTRY_COMPARE(plot->legend->wrap(), 1);
    plot->replot();
    QVERIFY(plot->legend->outerRect().right() <= plot->width());
    view.resize(700, 300);
    QTRY_COMPARE(plot->legend->wrap(), 2);
    plot->replot();
    QVERIFY(plot->legend->outerRect().right() <= plot->width());
  }

  void theMemoryChartsTickLabelsDoNotRunIntoEachOtherInANarrowDock() {
    // A child without a layout around it: squeezed below its minimum size, as
    // a dock beside three others squeezes it.
    QWidget dock;
    dock.resize(180, 260);
    auto* view = new MemoryView(&dock);
    view->setPrediction(std::make_shared<const Prediction>(predict_experiment(default_experiment())));
    view->setGeometry(0, 0, 180, 260);
    dock.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dock));
    QCustomPlot* plot = view->plot();
    // A few steps of a live run: three-digit times, the widest labels.
    plot->axisRect(0)->axis(QCPAxis::atBottom)->setRange(0, 230);
    // The tick count follows the layout: settled after a replot or two.
    for (int i = 0; i < 3; ++i) {
      plot->replot();
      QCoreApplication::processEvents();
    }
    const double kLabelSpacing = 6;  // closer, "100150" reads as one number
    for (QCPAxisRect* rect : plot->axisRects()) {
      QCPAxis* time = rect->axis(QCPAxis::atBottom);
      const QFontMetrics metrics(time->tickLabelFont());
      const QVector<double> ticks = time->tickVector();
      const QVector<QString> labels = time->tickVectorLabels();
      QVERIFY(ticks.size() >= 2);
      for (int t = 1; t < ticks.size(); ++t) {
        const double gap = time->coordToPixel(ticks[t]) - time->coordToPixel(ticks[t - 1]);
        const double room = (metrics.horizontalAdvance(labels[t - 1]) + metrics.horizontalAdvance(labels[t])) / 2.0;
        QVERIFY2(gap >= room + kLabelSpacing, qPrintable(QStringLiteral("'%1' and '%2': %3 px apart, %4 px wide")
                                            .arg(labels[t - 1], labels[t]).arg(gap).arg(room)));
      }
    }
  }

  void theMemoryChartsKeepBothPanesWhenTheRunHasManyDevices() {
    // A legend row per device pushed the stacked chart into a strip a few
    // pixels high once a run had 32 devices.
    QWidget dock;
    dock.resize(470, 300);
    auto* view = new MemoryView(&dock);
    Experiment experiment = default_experiment();
    experiment.parallel.dp = 16;  // 32 devices with its two stages
    view->setPrediction(std::make_shared<const Prediction>(predict_experiment(experiment)));
    view->setGeometry(0, 0, 470, 300);
    dock.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dock));
    QCustomPlot* plot = view->plot();
    QTRY_VERIFY(plot->graphCount() > 32);
    plot->replot();
    const QCPAxisRect* totals = plot->axisRect(0);
    const QCPAxisRect* stacked = plot->axisRect(1);
    QVERIFY2(stacked->height() >= totals->height() * 0.6,
             qPrintable(QStringLiteral("totals %1 px, by category %2 px")
                            .arg(totals->height())
                            .arg(stacked->height())));
    // The legend names the device the stacked chart shows, and how many there are.
    QCOMPARE(plot->legend->itemCount(), 1);
    auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(0));
    QVERIFY(item);
    QCOMPARE(item->plottable()->name(), QStringLiteral("device 0 (of 32)"));
  }

  void theMemoryDevicesAreRelabelledWhenTheirPlacesChange() {
    // A plan that moves the devices without changing their count (two stages
    // become two replicas) kept the old stages in the device list.
    MemoryView view;
    Experiment pipelined = default_experiment();  // pp 2
    view.setPrediction(std::make_shared<const Prediction>(predict_experiment(pipelined)));
    auto* devices = view.findChild<QComboBox*>();
    QVERIFY(devices);
    QTRY_COMPARE(devices->count(), 2);
    QVERIFY2(devices->itemText(1).contains(QStringLiteral("stage 1")),
             qPrintable(devices->itemText(1)));
    Experiment replicated = pipelined;
    replicated.parallel.pp = 1;
    replicated.parallel.dp = 2;
    view.setPrediction(std::make_shared<const Prediction>(predict_experiment(replicated)));
    QTRY_VERIFY2(devices->itemText(1).contains(QStringLiteral("replica 1")),
                 qPrintable(devices->itemText(1)));
    QCOMPARE(devices->count(), 2);
    QVERIFY(!devices->itemText(1).contains(QStringLiteral("stage 1")));
  }

  void theOverheadChartsDeviceLabelsDoNotRunIntoEachOther() {
    // 128 devices' "12 P" labels under a dock 430 pixels wide ran into a black band.
    for (const int dp : {1, 64}) {  // 2 devices (every bar labelled) and 128
      OverheadView view;
      view.resize(430, 260);
      Experiment experiment = default_experiment();
      experiment.parallel.dp = dp;
      experiment.training.batch_size = 4 * 4 * dp;
      view.setPrediction(std::make_shared<const Prediction>(predict_experiment(experiment)),
                         experiment);
      view.show();
      QVERIFY(QTest::qWaitForWindowExposed(&view));
      QCustomPlot* plot = view.plot();
      for (int i = 0; i < 3; ++i) {  // the labels follow the layout
        plot->replot();
        QCoreApplication::processEvents();
      }
      QCPAxis* axis = plot->xAxis;
      const QFontMetrics metrics(axis->tickLabelFont());
      const QVector<double> ticks = axis->tickVector();
      const QVector<QString> labels = axis->tickVectorLabels();
      QVERIFY(ticks.size() >= 2);
      if (dp == 1) QCOMPARE(labels.front(), QStringLiteral("0 P"));
      for (int t = 1; t < ticks.size(); ++t) {
        const double gap = axis->coordToPixel(ticks[t]) - axis->coordToPixel(ticks[t - 1]);
        const double room =
            (metrics.horizontalAdvance(labels[t - 1]) + metrics.horizontalAdvance(labels[t])) / 2.0;
        QVERIFY2(gap >= room + 4, qPrintable(QStringLiteral("'%1' and '%2': %3 px apart")
                                                 .arg(labels[t - 1], labels[t])
                                                 .arg(gap)));
      }
    }
  }

  void malformedExperimentShowsAnErrorAndKeepsThePreviousOne() {
    QTemporaryDir folder;
    const QString good = folder.filePath("good.json");
    Experiment experiment = default_experiment();
    experiment.name = "the good one";
    experiment.parallel.microbatches = 8;
    save_experiment(experiment, good.toStdString());

    MainWindow window;
    QVERIFY(window.openFile(good));
    const std::string before = experiment_to_json(window.document()->experiment());

    const QString broken = folder.filePath("broken.json");
    QVERIFY(testing::write_text(broken, "{ \"name\": \"broken\", \"parallel\": { \"pp\": "));
    QVERIFY(!window.openFile(broken));
    QVERIFY(window.notice().contains("broken.json"));
    QCOMPARE(experiment_to_json(window.document()->experiment()), before);
    QCOMPARE(window.document()->filePath(), QFileInfo(good).absoluteFilePath());

    const QString unknown_key = folder.filePath("unknown.json");
    // A complete experiment but for one misspelt key.
    QString text = QString::fromStdString(experiment_to_json(experiment));
    QVERIFY(text.contains("\"parallel\": {"));
    text.replace("\"parallel\": {", "\"parallel\": { \"pipelines\": 4,");
    QVERIFY(testing::write_text(unknown_key, text.toUtf8()));
    QVERIFY(!window.openFile(unknown_key));
    QVERIFY(window.notice().contains("pipelines"));
    QCOMPARE(experiment_to_json(window.document()->experiment()), before);

    QVERIFY(!window.openFile(folder.filePath("missing.json")));
    QCOMPARE(experiment_to_json(window.document()->experiment()), before);
  }

  void aRunFileOpensAsARunAndLeavesTheExperimentAlone() {
    QTemporaryDir folder;
    RunRecord record;
    record.name = "measured elsewhere";
    record.experiment = default_experiment();
    record.experiment.name = "the run's experiment";
    record.trace.source = "measured";
    record.trace.schedule = "1f1b";
    record.trace.devices = describe_devices(1, 1, 2, 1);
    const QString path = folder.filePath("elsewhere.run.json");
    save_run(record, path.toStdString());

    MainWindow window;
    const std::string before = experiment_to_json(window.document()->experiment());
    QVERIFY(window.openFile(path));
    QCOMPARE(window.runStore()->count(), 1);
    QCOMPARE(window.runStore()->run(0)->name, std::string("measured elsewhere"));
    QVERIFY(window.compareView()->isVisible());
    QCOMPARE(experiment_to_json(window.document()->experiment()), before);

    // A damaged run is refused with its file named, and nothing is added.
    const QString damaged = folder.filePath("damaged.run.json");
    QVERIFY(testing::write_text(damaged, "{\"format\": \"pipelab-run\", \"version\": 1"));
    QVERIFY(!window.openFile(damaged));
    QVERIFY(window.notice().contains("damaged.run.json"));
    QCOMPARE(window.runStore()->count(), 1);
  }

  void fileWithValuesToFixOpensAndListsTheProblems() {
    QTemporaryDir folder;
    Experiment experiment = default_experiment();
    experiment.parallel.microbatches = 7;  // does not divide the batch of 64
    const QString path = folder.filePath("fixme.json");
    save_experiment(experiment, path.toStdString());
    MainWindow window;
    QVERIFY(window.openFile(path));
    QCOMPARE(window.document()->experiment().parallel.microbatches, 7);
    window.predictor();
    QTRY_VERIFY(!window.shownProblems().isEmpty());
    // The micro-batch problem sits in the parallelism panel.
    bool in_parallel_panel = false;
    for (ProblemLabel* label : window.parallelPanel()->findChildren<ProblemLabel*>())
      for (const QString& problem : label->problems())
        in_parallel_panel |= problem.contains("parallel.microbatches");
    QVERIFY(in_parallel_panel);
  }

  void titleMarksUnsavedChangesAndSaveClearsThem() {
    QTemporaryDir folder;
    MainWindow window;
    QVERIFY(!window.isWindowModified());
    QVERIFY(window.windowTitle().contains("Untitled"));
    window.document()->edit([](Experiment& e) { e.training.steps = 17; });
    QVERIFY(window.isWindowModified());
    const QString path = folder.filePath("saved.json");
    QVERIFY(window.saveTo(path));
    QVERIFY(!window.isWindowModified());
    QVERIFY(window.windowTitle().contains("saved.json"));
    QCOMPARE(load_experiment(path.toStdString()).training.steps, 17);
    QCOMPARE(window.recentFiles().value(0), QFileInfo(path).absoluteFilePath());
    // Recent files persist.
    QCOMPARE(QSettings().value("recentFiles").toStringList().value(0),
             QFileInfo(path).absoluteFilePath());
  }

  void closingWithUnsavedChangesAsksFirst() {
    MainWindow window;
    window.show();
    int asked = 0;
    window.setSaveQuestion([&](const QString&) {
      ++asked;
      return QMessageBox::Cancel;
    });
    window.document()->edit([](Experiment& e) { e.training.steps = 3; });
    QVERIFY(!window.close());
    QCOMPARE(asked, 1);
    QVERIFY(window.isVisible());
    window.setSaveQuestion([&](const QString&) {
      ++asked;
      return QMessageBox::Discard;
    });
    QVERIFY(window.close());
    QCOMPARE(asked, 2);
  }

  void presetsSetUpTheirComparison() {
    MainWindow window;
    window.setSaveQuestion([](const QString&) { return QMessageBox::Discard; });
    QVERIFY(window.applyPreset("naive"));
    QCOMPARE(window.document()->experiment().parallel.microbatches, 1);
    QCOMPARE(window.document()->experiment().parallel.schedule, ScheduleKind::GPipe);
    window.predictor()->updateNow();
    const double naive = window.predictor()->prediction()->result.bubble_fraction;
    QVERIFY(window.applyPreset("gpipe"));
    window.predictor()->updateNow();
    const double gpipe = window.predictor()->prediction()->result.bubble_fraction;
    QVERIFY(gpipe < naive);  // the point of the comparison
    QVERIFY(window.applyPreset("zero-bubble"));
    window.predictor()->updateNow();
    const auto& events = window.predictor()->prediction()->result.trace.events;
    QVERIFY(std::any_of(events.begin(), events.end(),
                        [](const TraceEvent& e) { return e.op.kind == OpKind::BackwardWeight; }));
    // The V schedules: device 0 runs the last stage too; dualpipev pairs fused
    // backwards in its middle and splits them in its drain.
    for (const char* id : {"zb-v", "dualpipev"}) {
      QVERIFY2(window.applyPreset(id), id);
      QCOMPARE(window.document()->experiment().parallel.chunks, 2);
      window.predictor()->updateNow();
      const SimulationResult& result = window.predictor()->prediction()->result;
      const auto& v_events = result.trace.events;
      QVERIFY2(std::any_of(v_events.begin(), v_events.end(),
                           [](const TraceEvent& e) { return e.device == 0 && e.op.stage == 7; }),
               id);
      QVERIFY2(result.bubble_fraction < gpipe, id);
    }
    const auto& dualpipe_v = window.predictor()->prediction()->result.trace.events;
    for (OpKind kind : {OpKind::Backward, OpKind::BackwardInput, OpKind::BackwardWeight})
      QVERIFY(std::any_of(dualpipe_v.begin(), dualpipe_v.end(),
                          [kind](const TraceEvent& e) { return e.op.kind == kind; }));
    // PipeMare stashes nothing where PipeDream stashes p - 1 versions on device 0.
    const auto stashed_on_device_0 = [&] {
      window.predictor()->updateNow();
      return window.predictor()->prediction()->result.per_device[0]
          .peak_bytes[static_cast<size_t>(MemoryCategory::StashedWeights)];
    };
    QVERIFY(window.applyPreset("pipedream"));
    QVERIFY(stashed_on_device_0() > 0);
    QVERIFY(window.applyPreset("pipemare"));
    QCOMPARE(window.document()->experiment().parallel.schedule, ScheduleKind::PipeMare);
    QCOMPARE(stashed_on_device_0(), int64_t{0});
    // Its techniques switch in the data panel, which offers them under pipemare only.
    QCheckBox* correction = window.dataPanel()->discrepancyCorrectionCheck();
    QVERIFY(correction->isEnabled() && correction->isChecked());
    correction->click();
    QVERIFY(!window.document()->experiment().training.pipemare.discrepancy_correction);
    QVERIFY(window.applyPreset("pipedream"));
    QVERIFY(!window.dataPanel()->discrepancyCorrectionCheck()->isEnabled());
    QVERIFY(!window.applyPreset("no-such-preset"));
  }

  // The fp32-gradients switch: offered under bf16-mixed only, and it doubles
  // the predicted gradients (2 bytes a parameter to 4).
  void fp32GradientsAreOfferedUnderBf16AndDoubleThePredictedGradients() {
    MainWindow window;
    QCheckBox* fp32_gradients = window.dataPanel()->fp32GradientsCheck();
    window.document()->edit([](Experiment& e) { e.training.precision = Precision::Fp32; });
    QVERIFY(!fp32_gradients->isEnabled());
    window.document()->edit([](Experiment& e) { e.training.precision = Precision::Bf16Mixed; });
    QVERIFY(fp32_gradients->isEnabled() && !fp32_gradients->isChecked());
    const auto gradients_on_device_0 = [&] {
      window.predictor()->updateNow();
      return window.predictor()->prediction()->result.per_device[0].peak_bytes[static_cast<size_t>(
          MemoryCategory::Gradients)];
    };
    const int64_t bf16 = gradients_on_device_0();
    QVERIFY(bf16 > 0);
    fp32_gradients->click();
    QVERIFY(window.document()->experiment().training.fp32_gradients);
    QCOMPARE(gradients_on_device_0(), 2 * bf16);
  }

  void cudaIsGreyedOutWithTheReasonWhenThereIsNoGpu() {
    GpuAvailability none;
    none.built_with_cuda = true;
    none.inventory.unavailable_reason = "no CUDA device";
    MainWindow window(none);
    QComboBox* backend = window.parallelPanel()->backendCombo();
    auto* model = qobject_cast<QStandardItemModel*>(backend->model());
    QVERIFY(model);
    const int cuda = backend->findData("cuda");
    QVERIFY(cuda >= 0);
    QVERIFY(!model->item(cuda)->isEnabled());
    QVERIFY(model->item(cuda)->toolTip().contains("no CUDA device"));
    // A file that asks for CUDA anyway gets a plain-words problem, not a crash.
    window.document()->edit([](Experiment& e) { e.backend.type = "cuda"; });
    QVERIFY(!window.startRun());
    int said_so = 0;
    for (ProblemLabel* label : window.parallelPanel()->findChildren<ProblemLabel*>())
      for (const QString& problem : label->problems())
        said_so += problem.contains("no CUDA device") && problem.contains("CPU threads");
    QCOMPARE(said_so, 1);  // with the fix, once
    // Where the user pressed Run, too: why, and what to choose instead.
    QVERIFY(window.trainingView()->runError().contains("no CUDA device"));
    QVERIFY(window.trainingView()->runError().contains("CPU threads"));
    // And to a script (pipelab --run prints what it shows).
    QVERIFY(window.shownProblems().join(' ').contains("CPU threads"));
  }

  void problemsAreRoutedToTheirPanel() {
    QCOMPARE(problem_area("model.layers[2]: linear needs out >= 1, got 0"), ProblemArea::Model);
    QCOMPARE(problem_area("parallel.partition = [9]: boundary 9 is outside 1..6"),
             ProblemArea::Model);
    QCOMPARE(problem_area("data.path is empty; data.source = 'csv' reads files"),
             ProblemArea::Data);
    QCOMPARE(problem_area("training.optimizer.lr = 0 must be > 0"), ProblemArea::Data);
    QCOMPARE(problem_area("parallel.microbatches = 7 does not divide"), ProblemArea::Parallel);
    QCOMPARE(problem_area("pp = 8 but the model has 5 splittable layers"), ProblemArea::Parallel);
    QCOMPARE(problem_area(
                 "training diverged at step 3 (loss is NaN); lower training.optimizer.lr (now 10)"),
             ProblemArea::Data);
    QCOMPARE(problem_area("something else entirely"), ProblemArea::Run);
  }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
