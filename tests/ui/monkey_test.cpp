// A careless user, scripted: random run controls, presets, edits and typed
// values in every panel, Plan for me and its undo, playback speed and timeline
// arrangement, exports, saved and reopened runs and experiments, in odd orders
// and during runs. The window must stay alive, every export must write or say
// why not, and the experiment the user made must still save.
#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QRandomGenerator>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include "core/io/experiment_io.h"
#include "core/planner/plan_proposal.h"
#include "ui/exports/export_actions.h"
#include "ui/language.h"
#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/plan_controller.h"
#include "ui/models/presets.h"
#include "ui/models/run_store.h"
#include "ui/models/run_controller.h"
#include "ui/panels/data_panel.h"
#include "ui/panels/model_panel.h"
#include "ui/panels/parallel_panel.h"
#include "ui/runs_menu.h"
#include "ui/timeline/timeline_view.h"
#include "ui_test_support.h"

using namespace pipelab;

class MonkeyTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    testing::use_test_settings();
    QSettings().clear();
  }

  void randomActionsNeverCrash() {
    // Other seeds and longer sequences: MONKEY_SEED, MONKEY_ACTIONS. Seed 2
    // trains 4096 micro-batches for 200 steps (24 million trace records) and
    // takes minutes, so it is not the default.
    const quint32 seed = qEnvironmentVariableIntValue("MONKEY_SEED") ? qEnvironmentVariableIntValue("MONKEY_SEED") : 1;
    const int count = qEnvironmentVariableIntValue("MONKEY_ACTIONS") ? qEnvironmentVariableIntValue("MONKEY_ACTIONS") : 400;
    QRandomGenerator random(seed);
    QTemporaryDir files;
    QVERIFY(files.isValid());
    MainWindow window;
    window.setSaveQuestion([](const QString&) { return QMessageBox::Discard; });
    window.show();
    std::vector<Preset> all = presets();
    const QStringList texts = {"-1", "0", "99999999999", "abc", "", "3", "2", "8", "1", "64", "1e9", "-0", "4096"};
    for (int i = 0; i < count; ++i) {
      // A language change rebuilds the panels: look them up each time.
      QWidget* panels[] = {window.parallelPanel(), window.modelPanel(), window.dataPanel()};
      const int what = random.bounded(25);
      QString log;
      switch (what) {
        case 0: case 1: log = "runOrPause"; window.runOrPause(); break;
        case 2: log = "step"; window.stepOnce(); break;
        case 3: log = "stop"; window.stopRun(); break;
        case 4: log = "reset"; window.resetRun(); break;
        case 5: {
          const Preset& p = all[random.bounded(int(all.size()))];
          log = "preset " + p.id;
          window.applyPreset(p.id);
          break;
        }
        case 6: case 7: case 8: {
          QWidget* panel = panels[random.bounded(3)];
          const auto spins = panel->findChildren<QAbstractSpinBox*>();
          if (spins.isEmpty() || !panel->isEnabled()) break;
          QAbstractSpinBox* spin = spins[random.bounded(spins.size())];
          if (!spin->isEnabled()) break;
          const QString text = texts[random.bounded(texts.size())];
          log = "type '" + text + "' into " + spin->objectName() + " " + spin->metaObject()->className();
          spin->setFocus();
          spin->selectAll();
          QTest::keyClicks(spin, text);
          QTest::keyClick(spin, Qt::Key_Return);
          if (random.bounded(2)) QTest::keyClick(spin, random.bounded(2) ? Qt::Key_Up : Qt::Key_PageDown);
          break;
        }
        case 9: case 10: {
          QWidget* panel = panels[random.bounded(3)];
          const auto combos = panel->findChildren<QComboBox*>();
          if (combos.isEmpty() || !panel->isEnabled()) break;
          QComboBox* combo = combos[random.bounded(combos.size())];
          if (!combo->isEnabled() || combo->count() == 0) break;
          const int index = random.bounded(combo->count());
          log = QString("combo %1 -> %2").arg(combo->objectName()).arg(index);
          combo->setCurrentIndex(index);
          break;
        }
        case 11: {
          QWidget* panel = panels[random.bounded(3)];
          const auto boxes = panel->findChildren<QCheckBox*>();
          if (boxes.isEmpty() || !panel->isEnabled()) break;
          QCheckBox* box = boxes[random.bounded(boxes.size())];
          if (!box->isEnabled()) break;
          log = "check " + box->text();
          box->click();
          break;
        }
        case 12: {
          const auto sliders = window.parallelPanel()->findChildren<QSlider*>();
          if (sliders.isEmpty() || !window.parallelPanel()->isEnabled()) break;
          QSlider* slider = sliders[random.bounded(sliders.size())];
          const int v = slider->minimum() + random.bounded(slider->maximum() - slider->minimum() + 1);
          log = QString("slider %1").arg(v);
          slider->setValue(v);
          break;
        }
        case 13: {
          const auto buttons = window.modelPanel()->findChildren<QAbstractButton*>();
          if (buttons.isEmpty() || !window.modelPanel()->isEnabled()) break;
          QAbstractButton* button = buttons[random.bounded(buttons.size())];
          if (!button->isEnabled() || !button->isVisible()) break;
          log = "model button " + button->text();
          if (button->text().contains("…") || button->text().contains("...")) break;  // dialogs
          button->click();
          break;
        }
        case 14: {
          QWidget* panel = panels[random.bounded(3)];
          const auto edits = panel->findChildren<QLineEdit*>();
          if (edits.isEmpty() || !panel->isEnabled()) break;
          QLineEdit* edit = edits[random.bounded(edits.size())];
          if (!edit->isEnabled() || edit->isReadOnly() || qobject_cast<QAbstractSpinBox*>(edit->parent())) break;
          const QStringList lines = {"1, 28, 28", "", "-5", "0,0", "99999999,99999999", "2,4,1000", "a", "1", "0", "3, 2", "1,1,1"};
          const QString text = lines[random.bounded(lines.size())];
          log = "line edit " + edit->objectName() + " '" + text + "'";
          edit->setFocus();
          edit->selectAll();
          QTest::keyClicks(edit, text);
          QTest::keyClick(edit, Qt::Key_Return);
          break;
        }
        case 15: case 16: {
          const auto views = window.modelPanel()->findChildren<QAbstractItemView*>();
          if (views.isEmpty() || !window.modelPanel()->isEnabled()) break;
          QAbstractItemView* view = views.first();
          QAbstractItemModel* model = view->model();
          if (!model || model->rowCount() == 0) break;
          const int row = random.bounded(model->rowCount());
          const int column = random.bounded(model->columnCount());
          view->setCurrentIndex(model->index(row, column));
          const QStringList values = {"0", "-3", "99999999999", "abc", "", "linear", "relu", "dropout", "transformer_block", "embedding", "moe", "conv2d", "1", "0.5", "1e30"};
          const QString value = values[random.bounded(values.size())];
          log = QString("layer %1,%2 = '%3'").arg(row).arg(column).arg(value);
          model->setData(model->index(row, column), value, Qt::EditRole);
          break;
        }
        case 17: {
          const QStringList codes = {"en", "de", "zh_CN", "fr"};
          const QString code = codes[random.bounded(codes.size())];
          log = "language " + code;
          window.setLanguage(code);
          break;
        }
        case 18: {
          PlanRequest request;
          request.devices = 1 + random.bounded(16);
          request.memory_per_device = random.bounded(2) ? int64_t{1} << 30 : 1024;
          log = QString("plan for %1 devices").arg(request.devices);
          window.planFor(request);
          break;
        }
        case 19:
          log = "undo plan";
          window.planController()->undo();
          break;
        case 20: {
          QComboBox* speed = window.speedCombo();
          const int index = random.bounded(speed->count());
          log = QString("speed %1").arg(index);
          speed->setCurrentIndex(index);
          break;
        }
        case 21: {
          const int arrangement = random.bounded(7);
          log = QString("arrangement %1").arg(arrangement);
          window.timelineView()->setArrangement(static_cast<TimelineView::Arrangement>(arrangement));
          window.timelineView()->setFollowLive(random.bounded(2));
          break;
        }
        case 22: {
          // Exports during a run, before one, after a reset: a file or a clear error.
          const int which = random.bounded(6);
          log = QString("export %1").arg(which);
          QString error;
          const QString base = files.filePath(QString("export%1").arg(i));
          ExportActions* exports = window.exports();
          bool ok = false;
          if (which == 0) ok = exports->exportTimeline(base + ".png", &error, QSize(800, 300));
          if (which == 1) ok = exports->exportMemoryChart(base + ".svg", &error, QSize(600, 300));
          if (which == 2) ok = exports->exportTrainingChart(base + ".pdf", &error, QSize(600, 300));
          if (which == 3) ok = exports->exportOverheadChart(base + ".png", &error, QSize(600, 300));
          if (which == 4) ok = exports->exportChromeTrace(base + ".json", &error);
          if (which == 5) ok = exports->exportCsv(base, &error);
          QVERIFY2(ok || !error.isEmpty(), qPrintable(log));
          break;
        }
        case 23: {
          // A finished run saved from the Runs menu, then opened again.
          const int runs = window.runStore()->count();
          if (runs == 0) break;
          const QString path = files.filePath(QString("run%1.json").arg(i));
          log = "save and reopen a run";
          if (window.runsMenu()->saveRun(random.bounded(runs), path))
            QVERIFY2(window.runsMenu()->openRun(path), qPrintable(window.notice()));
          break;
        }
        case 24: {
          // The experiment as it is (valid or not) saved and opened again.
          if (window.runController()->isActive()) break;
          const QString path = files.filePath(QString("experiment%1.json").arg(i));
          log = "save and reopen the experiment";
          if (window.saveTo(path)) window.openFile(path);
          break;
        }
      }
      if (qEnvironmentVariableIsSet("MONKEY_LOG")) qInfo("%d: %s", i, qPrintable(log));
      QTest::qWait(random.bounded(3) == 0 ? 0 : random.bounded(40));
    }
    window.resetRun();

    // What the user made can still be saved and read back as it is.
    const Experiment made = window.document()->experiment();
    QCOMPARE(experiment_to_json(parse_experiment_unvalidated(experiment_to_json(made))),
             experiment_to_json(made));
    // And the window still trains: a preset runs to its end.
    QVERIFY(window.applyPreset(QStringLiteral("1f1b-memory")));
    window.runOrPause();
    QTRY_VERIFY_WITH_TIMEOUT(!window.runController()->isActive(), 60000);
    QCOMPARE(window.runController()->phase(), RunController::Phase::Finished);
  }
};

QTEST_MAIN(MonkeyTest)
#include "monkey_test.moc"
