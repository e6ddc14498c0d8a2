// The app in Simplified Chinese: every text the sources mark for translation
// has a finished Chinese translation, core's common messages are shown in
// Chinese, the window comes up in Chinese, and
// View > Language switches the live window without losing the experiment,
// the run, the preset note or the comparison window.
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QMenuBar>
#include <QProcess>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "core/data/csv_reader.h"
#include "core/data/dataset.h"
#include "core/data/idx_reader.h"
#include "core/data/sequence_tasks.h"
#include "core/data/text_corpus.h"
#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"
#include "core/io/run_file.h"
#include "core/live/live_frames.h"
#include "core/plan/parallel_plan.h"
#include "core/planner/plan_proposal.h"
#include "core/planner/split_search.h"
#include "core/runtime/host_memory_check.h"
#include "core/runtime/run_settings.h"
#include "core/runtime/trainable.h"
#include "core/runtime/training_data.h"
#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "core/sim/experiment_prediction.h"
#include "ui/core_message_text.h"
#include "ui/exports/chart_export.h"
#include "ui/language.h"
#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/prediction_updater.h"
#include "ui/models/presets.h"
#include "ui/models/run_controller.h"
#include "ui/models/run_store.h"
#include "ui/panels/compare_view.h"
#include "ui/panels/overhead_view.h"
#include "ui/panels/split_search_dialog.h"
#include "ui/panels/stats_panel.h"
#include "ui/timeline/timeline_chart.h"
#include "ui/timeline/timeline_plottable.h"
#include "ui/timeline/timeline_view.h"
#include "ui_test_support.h"

using namespace pipelab;

namespace {

const QString kTsFile = QStringLiteral(PIPELAB_SOURCE_DIR "/ui/translations/pipelab_zh_CN.ts");
const QString kChinese = QStringLiteral("zh_CN");
const QString kEnglish = QStringLiteral("en");

struct Message {
  QString context;
  QString source;
  QString translation;
  QString type;  // "unfinished", "vanished", "obsolete" or empty (finished)
};

QList<Message> read_ts(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  QXmlStreamReader xml(&file);
  QList<Message> messages;
  QString context;
  Message message;
  while (!xml.atEnd()) {
    xml.readNext();
    if (!xml.isStartElement()) continue;
    if (xml.name() == QLatin1String("name")) {
      context = xml.readElementText();
    } else if (xml.name() == QLatin1String("message")) {
      message = Message{context, {}, {}, {}};
    } else if (xml.name() == QLatin1String("source")) {
      message.source = xml.readElementText();
    } else if (xml.name() == QLatin1String("translation")) {
      message.type = xml.attributes().value(QLatin1String("type")).toString();
      // A plural's forms are child elements (numerusform): their text together.
      message.translation = xml.readElementText(QXmlStreamReader::IncludeChildElements);
      messages << message;
    }
  }
  return messages;
}

// "%1", "%2", ... in a text, each once.
QStringList placeholders(const QString& text) {
  QStringList found;
  static const QRegularExpression pattern(QStringLiteral("%\\d"));
  for (auto it = pattern.globalMatch(text); it.hasNext();) found << it.next().captured();
  found.removeDuplicates();
  found.sort();
  return found;
}

bool has_chinese(const QString& text) {
  for (QChar c : text)
    if (c.unicode() >= 0x4e00 && c.unicode() <= 0x9fff) return true;
  return false;
}

QStringList menu_titles(QMainWindow& window) {
  QStringList titles;
  for (QAction* action : window.menuBar()->actions()) titles << action->text();
  return titles;
}

QStringList dock_titles(QMainWindow& window) {
  QStringList titles;
  for (QDockWidget* dock : window.findChildren<QDockWidget*>()) titles << dock->windowTitle();
  titles.sort();
  return titles;
}

QAction* language_action(QMainWindow& window, const QString& name) {
  auto* menu = window.findChild<QMenu*>(QStringLiteral("languageMenu"));
  if (!menu) return nullptr;
  for (QAction* action : menu->actions())
    if (action->text() == name) return action;
  return nullptr;
}

}  // namespace

class TranslationsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    testing::use_test_settings();
    QSettings().clear();
  }

  void cleanup() { apply_language(kEnglish); }

  void everyTextHasAFinishedChineseTranslation() {
#ifndef PIPELAB_LUPDATE_PATH
    QSKIP("Qt's lupdate was not found when the tests were configured");
#else
    // lupdate over today's sources into a copy: a new tr() text nobody
    // translated comes out unfinished.
    QTemporaryDir folder;
    const QString copy = folder.filePath(QStringLiteral("pipelab_zh_CN.ts"));
    QVERIFY(QFile::copy(kTsFile, copy));
    QFile::setPermissions(copy, QFile::ReadOwner | QFile::WriteOwner);
    QProcess lupdate;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("LUPDATE"), QStringLiteral(PIPELAB_LUPDATE_PATH));
    lupdate.setProcessEnvironment(environment);
    lupdate.start(
        QStringLiteral("sh"),
        {QStringLiteral(PIPELAB_SOURCE_DIR "/ui/translations/update_translations.sh"), copy});
    QVERIFY(lupdate.waitForFinished(60000));
    QVERIFY2(lupdate.exitCode() == 0, lupdate.readAllStandardError().constData());

    const QList<Message> messages = read_ts(copy);
    QVERIFY(messages.size() > 100);
    QStringList untranslated;
    QStringList wrong_placeholders;
    for (const Message& message : messages) {
      if (message.type == QLatin1String("vanished") || message.type == QLatin1String("obsolete"))
        continue;  // no longer in the sources
      if (!message.type.isEmpty() || message.translation.isEmpty())
        untranslated << message.context + QStringLiteral(": ") + message.source;
      else if (placeholders(message.source) != placeholders(message.translation))
        wrong_placeholders << message.context + QStringLiteral(": ") + message.source;
    }
    QVERIFY2(untranslated.isEmpty(),
             qPrintable(QStringLiteral("%1 texts have no finished Chinese translation; run "
                                       "ui/translations/update_translations.sh and translate "
                                       "them in ui/translations/pipelab_zh_CN.ts:\n")
                            .arg(untranslated.size()) +
                        untranslated.join('\n')));
    QVERIFY2(wrong_placeholders.isEmpty(),
             qPrintable(QStringLiteral("translations whose %1, %2, ... differ from the source:\n") +
                        wrong_placeholders.join('\n')));
#endif
  }

  void coreTextsTheAppShowsAreTranslated() {
    QVERIFY(apply_language(kChinese));
    for (const std::string& name : schedule_names()) {
      const char* english = schedule_description(*parse_schedule(name));
      QVERIFY2(QCoreApplication::translate("core", english) != QString::fromUtf8(english), english);
    }
    for (PlannerKind planner : {PlannerKind::Dapple, PlannerKind::PipeDream}) {
      const char* english = planner_description(planner);
      QVERIFY2(QCoreApplication::translate("core", english) != QString::fromUtf8(english), english);
    }
  }

  void everyScheduleFormulaReadsInChinese() {
    // core's formula texts hold words ("for m>=p", "(steady state)") besides the math.
    QVERIFY(apply_language(kChinese));
    for (const std::string& name : schedule_names()) {
      for (const int microbatches : {2, 8}) {  // interleaving's two cases, m < p and m >= p
        Experiment experiment = default_experiment();
        experiment.parallel.schedule = *parse_schedule(name);
        experiment.parallel.pp = 4;
        experiment.parallel.microbatches = microbatches;
        experiment.parallel.chunks =
            experiment.parallel.schedule == ScheduleKind::Interleaved1F1B ? 2 : 1;
        StatsPanel stats;
        stats.setPrediction(nullptr, experiment);
        OverheadView overhead;
        overhead.setPrediction(nullptr, experiment);
        const QString where =
            QString::fromStdString(name) + QStringLiteral(", m = %1: ").arg(microbatches);
        QVERIFY2(has_chinese(stats.formulaText()), qPrintable(where + stats.formulaText()));
        const QString legend = overhead.plot()->graph(0)->name();
        for (const QString& text : {stats.formulaText(), legend})
          for (const char* english : {" for ", "steady", "state", "formula"})
            QVERIFY2(!text.contains(QLatin1String(english)), qPrintable(where + text));
      }
    }
  }

  void coreMessagesTheAppShowsAreTranslated() {
    QVERIFY(apply_language(kChinese));
    MainWindow window;
    window.setSaveQuestion([](const QString&) { return QMessageBox::Discard; });
    // Problems core/ reports for edits the panels allow, each shown in Chinese.
    const std::function<void(Experiment&)> edits[] = {
        [](Experiment& e) { e.parallel.dp = 3; },
        [](Experiment& e) { e.parallel.microbatches = 7; },
        [](Experiment& e) { e.parallel.pp = 40; },
        [](Experiment& e) { e.training.optimizer.lr = 0; },
        [](Experiment& e) { e.data.classes = 5; },
        [](Experiment& e) {
          e.data.source = "blobs";
          e.data.features = 3;
        },
        [](Experiment& e) {
          e.data.source = "mnist";
          e.data.path.clear();
        },
        [](Experiment& e) {
          e.data.source = "csv";
          e.data.path.clear();
        },
        [](Experiment& e) {
          e.parallel.schedule = ScheduleKind::DualPipeV;
          e.parallel.chunks = 2;
          e.parallel.microbatches = 2;
        },
        [](Experiment& e) {  // ZeRO 2 in a pipeline
          e.parallel.dp = 2;
          e.parallel.pp = 2;
          e.parallel.zero = 2;
        },
        [](Experiment& e) {  // ZeRO with asynchronous data parallelism
          e.parallel.dp = 2;
          e.parallel.update = UpdateMode::Async;
          e.parallel.zero = 1;
        },
        [](Experiment& e) { e.parallel.cp = 2; },  // context parallelism of an MLP
        [](Experiment& e) { e.parallel.schedule = ScheduleKind::ZeroBubbleV; },  // chunks != 2
        [](Experiment& e) {  // pipedream-2bw with fewer micro-batches than stages
          e.parallel.schedule = ScheduleKind::PipeDream2BW;
          e.parallel.microbatches = 1;
        },
        [](Experiment& e) {  // a stage boundary past the layers
          e.parallel.partition = PartitionRule::Explicit;
          e.parallel.boundaries = {99};
        },
        [](Experiment& e) {  // boundaries out of order
          e.parallel.pp = 3;
          e.parallel.partition = PartitionRule::Explicit;
          e.parallel.boundaries = {3, 2};
        },
        [](Experiment& e) { e.training.steps = 0; },              // any field's lower bound
        [](Experiment& e) { e.parallel.dp = 100000; },            // any field's upper bound
        [](Experiment& e) { e.data.validation_fraction = 1.5; },  // a fraction
        [](Experiment& e) {  // FSDP's resharding switch without ZeRO 3
          e.parallel.dp = 2;
          e.parallel.zero = 1;
          e.parallel.reshard_after_forward = false;
        },
    };
    const auto check_problems_in_chinese = [&window] {
      window.predictor()->updateNow();
      const QStringList problems = window.predictor()->problems();
      QVERIFY(!problems.isEmpty());
      for (const QString& problem : problems)
        QVERIFY2(has_chinese(core_message_text(problem)), qPrintable(problem));
    };
    for (const auto& edit : edits) {
      window.document()->replace(testing::short_experiment(2), QString(), false);
      window.document()->edit(edit);
      check_problems_in_chinese();
      if (QTest::currentTestFailed()) return;
    }
    // ... and for edits of the expert-parallel preset (ep 4, layers with experts).
    const auto first_with_experts = [](Experiment& e) -> LayerSpec& {
      for (LayerSpec& layer : e.model.layers)
        if (layer.experts > 0) return layer;
      throw std::logic_error("the expert-parallel preset has no layer with experts");
    };
    const std::function<void(Experiment&)> expert_parallel_edits[] = {
        [](Experiment& e) { e.parallel.dp = 2; },
        [&](Experiment& e) { first_with_experts(e).experts = 6; },
        [](Experiment& e) { e.parallel.update = UpdateMode::Async; },
        [](Experiment& e) {
          // No experts left anywhere: ep 4 has nothing to spread.
          std::erase_if(e.model.layers,
                        [](const LayerSpec& layer) { return layer.type == LayerType::Moe; });
          for (LayerSpec& layer : e.model.layers) layer.experts = 0;
        },
    };
    for (const auto& edit : expert_parallel_edits) {
      QVERIFY(window.applyPreset(QStringLiteral("expert-parallel")));
      window.document()->edit(edit);
      check_problems_in_chinese();
      if (QTest::currentTestFailed()) return;
    }
    // ... and for a Transformer's shapes: the vocabulary, heads that do not
    // divide the width or whose key/value heads do not divide them, a tp the
    // vocabulary does not split into.
    const auto first_block = [](Experiment& e) -> LayerSpec& {
      for (LayerSpec& layer : e.model.layers)
        if (layer.type == LayerType::TransformerBlock) return layer;
      throw std::logic_error("the preset has no transformer_block");
    };
    const std::function<void(Experiment&)> transformer_edits[] = {
        [](Experiment& e) { e.model.layers.back().out += 1; },
        [&](Experiment& e) { first_block(e).heads = 5; },
        [&](Experiment& e) { first_block(e).kv_heads = 5; },
        [](Experiment& e) {
          e.model.layers.front().vocab += 1;
          e.model.layers.back().out += 1;
          e.data.vocab += 1;
          e.parallel.tp = 2;
        },
    };
    for (const auto& edit : transformer_edits) {
      QVERIFY(window.applyPreset(QStringLiteral("megatron-attention")));
      window.document()->edit(edit);
      check_problems_in_chinese();
      if (QTest::currentTestFailed()) return;
    }
    // ... and for a Transformer preset whose sequence 2 cp does not divide.
    QVERIFY(window.applyPreset(QStringLiteral("megatron-attention")));
    window.document()->edit([](Experiment& e) { e.parallel.cp = 7; });
    check_problems_in_chinese();
    if (QTest::currentTestFailed()) return;
    // What a run refuses as it starts: context parallelism over a block with experts.
    QVERIFY(window.applyPreset(QStringLiteral("megatron-attention")));
    Experiment refused = window.document()->experiment();
    refused.parallel.cp = 2;
    const auto run_refusal = [](const Experiment& experiment) {
      try {
        check_trainable(experiment);
      } catch (const std::exception& error) {
        return QString::fromStdString(error.what());
      }
      return QString();
    };
    first_block(refused).experts = 4;
    QVERIFY2(has_chinese(core_message_text(run_refusal(refused))),
             qPrintable(run_refusal(refused)));
    // A run of an experiment with two problems: the first, then how many more, in Chinese.
    Experiment two = testing::short_experiment(2);
    two.training.optimizer.lr = 0;
    two.parallel.chunks = 2;
    QString combined;
    try {
      check_experiment(two);
    } catch (const std::exception& error) {
      combined = QString::fromStdString(error.what());
    }
    QVERIFY2(combined.endsWith(QLatin1String(" (and 1 more problem)")), qPrintable(combined));
    const QString combined_text = core_message_text(combined);
    QVERIFY2(combined_text.endsWith(QStringLiteral("（另有 1 个问题）")) &&
                 has_chinese(combined_text.chopped(QStringLiteral("（另有 1 个问题）").size())),
             qPrintable(combined_text));
    // A plan too large to build: counted by one replica standing for all,
    // every replica (with the hint that one would do), or an asynchronous one.
    ParallelPlan huge;
    huge.dp = 2;
    huge.tp = 64;
    huge.microbatches = 65536;
    const auto size_refusal = [](const ParallelPlan& plan, bool first_replica_only) {
      try {
        check_schedule_size(plan, 0, first_replica_only);
      } catch (const std::exception& error) {
        return QString::fromStdString(error.what());
      }
      return QString();
    };
    QVERIFY(size_refusal(huge, true).contains(QLatin1String("in one replica")));
    huge.tp = 32;
    QVERIFY(size_refusal(huge, false).contains(QLatin1String("simulate one replica for all")));
    huge.update = UpdateMode::Async;
    QVERIFY(!size_refusal(huge, false).isEmpty());
    for (const bool first_replica_only : {true, false}) {
      const QString refusal = size_refusal(huge, first_replica_only);
      QVERIFY2(has_chinese(core_message_text(refusal)), qPrintable(refusal));
    }
    huge.update = UpdateMode::Sync;
    for (const int tp : {64, 32}) {
      huge.tp = tp;
      const QString refusal = size_refusal(huge, tp == 64);
      QVERIFY2(has_chinese(core_message_text(refusal)), qPrintable(refusal));
    }
    // A rank of a run over processes that stops answering (pipelab --attach).
    QVERIFY(has_chinese(core_message_text(QStringLiteral(
        "rank 2 has not answered for 2.1 s (it died, stopped or its network is cut); stopping the run"))));
    // A run that runs out of host or GPU memory on a device, with the op it
    // was running (core/runtime's device worker, gpu/memory/out_of_memory.cpp),
    // and a run too large to save: Chinese with no English sentence left, the
    // op's label kept as it is.
    const QString failures[] = {
        QStringLiteral("device 0 ran out of host memory; use a smaller model, batch or fewer "
                       "micro-batches in flight (during F0 s1 step 3)"),
        QStringLiteral("device 1: out of GPU memory on GPU 0: asked 80.0 GiB for activations, "
                       "12.3 GiB free; this device counts 20.0 GiB in use and holds 3.0 MiB "
                       "cached; the 4 virtual devices on that GPU count 60.0 GiB and hold 5.0 MiB; "
                       "use fewer micro-batches in flight, recompute, or more pipeline stages "
                       "(during B1 s0)"),
        QStringLiteral("device 1: out of GPU memory on GPU 0: asked 80.0 GiB for activations, "
                       "12.3 GiB free; this device counts 20.0 GiB in use and holds 0 B cached; "
                       "use fewer micro-batches in flight, recompute, or more pipeline stages"),
        QString::fromStdString(run_file_size_problem(size_t{3} << 30, 12'345'678, 2'500'000)),
    };
    for (const QString& failure : failures) {
      const QString text = core_message_text(failure);
      QVERIFY2(has_chinese(text) && !text.contains(QLatin1String("use ")), qPrintable(text));
    }
    QVERIFY(core_message_text(failures[0]).contains(QLatin1String("F0 s1 step 3")));
    // Data errors whose values carry words (a text source's character
    // counts and sample window, a sequence task's reasons): no English left.
    const auto data_error = [](const std::function<void()>& load) {
      try {
        load();
      } catch (const std::exception& error) {
        return QString::fromStdString(error.what());
      }
      return QString();
    };
    const std::string text = "a short text";
    // A live stream whose frame holds an event on a device its run does not
    // have (pipelab --attach): the nested values in Chinese too.
    EventBatch bad_batch;
    TraceEvent stray;
    stray.device = 9;
    bad_batch.events.push_back(stray);
    const std::vector<char> bad_frame = live_batch_frame(bad_batch);
    constexpr size_t kFrameHeader = sizeof(uint32_t) + sizeof(uint64_t);
    const QString stream_error = data_error([&] {
      read_live_batch(bad_frame.data() + kFrameHeader, bad_frame.size() - kFrameHeader, 4);
    });
    QVERIFY2(stream_error.startsWith(QLatin1String("the run sent an event on device 9")),
             qPrintable(stream_error));
    const QString errors[] = {
        data_error([&] {
          parse_text_corpus({reinterpret_cast<const uint8_t*>(text.data()), text.size()},
                            "tiny.txt", TextCorpusOptions{});
        }),
        data_error([] { make_sequence_task("copy", SequenceTaskOptions{.vocab = 5}); }),
        data_error([] { make_sequence_task("add", SequenceTaskOptions{.sequence_length = 3}); }),
        stream_error,
    };
    static const QRegularExpression english_word(
        QStringLiteral("\\b(characters?|needs|tokens|the|and|an|event|device|but)\\b"));
    for (const QString& error : errors) {
      QVERIFY(!error.isEmpty());
      const QString translated = core_message_text(error);
      QVERIFY2(has_chinese(translated) && !translated.contains(english_word),
               qPrintable(error + " -> " + translated));
    }
    // The run log: progress lines and the last line.
    window.document()->replace(testing::short_experiment(2), QString(), false);
    QSignalSpy log(window.runController(), &RunController::message);
    QVERIFY(window.startRun());
    QTRY_VERIFY_WITH_TIMEOUT(window.runController()->phase() == RunController::Phase::Finished,
                             30000);
    QStringList progress;
    for (const QList<QVariant>& line : log) {
      const QString text = line.first().toString();
      if (text.startsWith(QLatin1String("step ")) || text.startsWith(QLatin1String("finished ")))
        progress << text;
    }
    QVERIFY(progress.size() >= 2);
    for (const QString& text : progress)
      QVERIFY2(has_chinese(core_message_text(text)), qPrintable(text));
    // English needs no translation: the text comes back as core wrote it.
    QVERIFY(apply_language(kEnglish));
    QCOMPARE(core_message_text(progress.last()), progress.last());
  }

  void windowComesUpInChinese() {
    QVERIFY(apply_language(kChinese));
    QCOMPARE(current_language(), kChinese);
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const QStringList menus = menu_titles(window);
    QVERIFY2(menus.contains(QStringLiteral("文件(&F)")), qPrintable(menus.join(' ')));
    QVERIFY2(menus.contains(QStringLiteral("预设(&P)")), qPrintable(menus.join(' ')));
    const QStringList docks = dock_titles(window);
    for (const char* title : {"并行", "模型", "数据与训练", "内存", "训练", "统计"})
      QVERIFY2(docks.contains(QString::fromUtf8(title)), qPrintable(docks.join(' ')));
    QVERIFY(window.timelineView()->predictedChart()->title().startsWith(QStringLiteral("预测")));
    // The overhead chart's legend: compute, recomputation, load imbalance, bubble, the formula.
    QCustomPlot* overhead = window.overheadView()->plot();
    QVERIFY(overhead->legend->itemCount() >= 4);
    for (int i = 0; i < overhead->legend->itemCount(); ++i) {
      auto* item = qobject_cast<QCPPlottableLegendItem*>(overhead->legend->item(i));
      QVERIFY(item);
      QVERIFY2(has_chinese(item->plottable()->name()), qPrintable(item->plottable()->name()));
    }
    QVERIFY(!window.grab().isNull());
    // An exported chart speaks the app's language too.
    QTemporaryDir dir;
    const QString svg = dir.filePath(QStringLiteral("timeline.svg"));
    QString error;
    QVERIFY2(export_charts({window.timelineView()->predictedChart()}, Qt::Vertical, svg, &error),
             qPrintable(error));
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(file.readAll());
    QVERIFY(text.contains(QStringLiteral("预测")));
    QVERIFY(text.contains(QStringLiteral("时间")));  // the time axis
  }

  void languageMenuSwitchesTheLiveWindowAndIsRemembered() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.document()->replace(testing::short_experiment(2), QString(), false);
    window.document()->edit([](Experiment& e) { e.parallel.microbatches = 2; });  // unsaved
    const std::string experiment = experiment_to_json(window.document()->experiment());
    QVERIFY2(window.startRun(), qPrintable(window.shownProblems().join('\n')));
    QTRY_VERIFY_WITH_TIMEOUT(window.runController()->phase() == RunController::Phase::Finished,
                             30000);
    const int steps = window.runController()->stepsDone();
    QVERIFY(menu_titles(window).contains(QStringLiteral("&File")));
    const auto left_dock_width = [&window] {
      return window.findChild<QDockWidget*>(QStringLiteral("parallelDock"))->width();
    };
    const int left_width = left_dock_width();

    QAction* chinese = language_action(window, QStringLiteral("简体中文"));
    QVERIFY(chinese);
    chinese->trigger();
    QTRY_VERIFY(menu_titles(window).contains(QStringLiteral("文件(&F)")));
    QVERIFY(dock_titles(window).contains(QStringLiteral("并行")));
    QCOMPARE(QSettings().value(QStringLiteral("language")).toString(), kChinese);
    QCOMPARE(startup_language(), kChinese);
    // The experiment, its unsaved state and the finished run are still there.
    QCOMPARE(experiment_to_json(window.document()->experiment()), experiment);
    QVERIFY(window.document()->isDirty());
    QCOMPARE(window.runController()->stepsDone(), steps);
    QVERIFY(window.timelineView()->measuredChart()->title().startsWith(QStringLiteral("实测")));
    QVERIFY(window.timelineView()->measuredChart()->bars()->eventCount() > 0);
    // The window keeps its layout.
    QTRY_VERIFY2(std::abs(left_dock_width() - left_width) <= 10,
                 qPrintable(QStringLiteral("%1 -> %2").arg(left_width).arg(left_dock_width())));

    QAction* english = language_action(window, QStringLiteral("English"));
    QVERIFY(english);
    QVERIFY(english != chinese);
    english->trigger();
    QTRY_VERIFY(menu_titles(window).contains(QStringLiteral("&File")));
    QCOMPARE(startup_language(), kEnglish);
    window.setSaveQuestion([](const QString&) { return QMessageBox::Discard; });
  }

  // Files a user writes or opens: experiments (every preset's, as saved), a
  // saved run, and the device and node files simulation.profile can name (the
  // catalogue's h100 and dgx-h100). Every field set wrong in each way a file can, removed, or
  // joined by an unknown key, and text that is not JSON: each refusal, with
  // the file and the device or node before it, in Chinese.
  void everyMistakeInAFileIsExplainedInChinese() {
    QVERIFY(apply_language(kChinese));
    QSet<QString> untranslated;
    int messages = 0;
    using Parse = std::function<void(const std::string&)>;
    const auto check = [&](const Parse& parse, const std::string& text) {
      try {
        parse(text);
      } catch (const std::exception& error) {
        ++messages;
        const QString english = QString::fromUtf8(error.what());
        if (!has_chinese(core_message_text(english))) untranslated.insert(english);
      }
    };
    const auto every_mistake = [&](const nlohmann::json& document, const Parse& parse) {
      std::function<void(const nlohmann::json::json_pointer&)> walk =
          [&](const nlohmann::json::json_pointer& at) {
            const nlohmann::json& value = document[at];
            if (at.to_string() == "/sources") return;
            if (!at.empty()) {  // the field (or the list's entry) left out
              nlohmann::json removed = document;
              nlohmann::json& parent = removed[at.parent_pointer()];
              if (parent.is_array())
                parent.erase(static_cast<size_t>(std::stoul(at.back())));
              else
                parent.erase(at.back());
              check(parse, removed.dump());
            }
            if (value.is_object()) {
              nlohmann::json extra = document;
              extra[at]["bogus_key"] = 1;
              check(parse, extra.dump());
              for (const auto& [key, member] : value.items()) walk(at / key);
              return;
            }
            if (value.is_array() && !value.empty() && value.front().is_object()) {
              for (size_t i = 0; i < value.size(); ++i) walk(at / i);
              return;
            }
            for (const nlohmann::json& wrong :
                 {nlohmann::json(-1), nlohmann::json(0), nlohmann::json(1e300),
                  nlohmann::json("text"), nlohmann::json(true), nlohmann::json::array()}) {
              nlohmann::json changed = document;
              changed[at] = wrong;
              check(parse, changed.dump());
            }
          };
      walk(nlohmann::json::json_pointer(""));
      check(parse, "{\"name\": ");
      check(parse, "[1, 2]");
    };
    for (const Preset& preset : presets(QStringLiteral("en")))
      every_mistake(nlohmann::json::parse(experiment_to_json(preset.experiment)),
                    [](const std::string& text) { parse_experiment(text); });
    // The experiment files in the repository (examples, the fuzzers' seeds and
    // the findings kept as regressions) as they are: what opening each says,
    // what it lacks to be valid and what keeps it from training.
    for (const char* folder : {"examples", "examples/published", "tests/fuzz/regressions",
                               "tests/fuzz/corpus/experiment_fuzz"}) {
      const QDir dir(QStringLiteral(PIPELAB_SOURCE_DIR "/") + QLatin1String(folder));
      QVERIFY(dir.exists());
      for (const QString& name : dir.entryList({QStringLiteral("*.json")}, QDir::Files)) {
        const std::string path = dir.filePath(name).toStdString();
        check(
            [](const std::string& file) {
              const Experiment experiment = load_experiment_unvalidated(file);
              const std::vector<std::string> problems = validate_experiment(experiment);
              if (!problems.empty()) throw ExperimentError(problems.front());
              check_trainable(experiment);
            },
            path);
      }
    }
    // A saved run (File > Open of a .run.json): a short run of the smallest preset.
    {
      RunRecord record;
      record.experiment = testing::short_experiment(2);
      record.experiment.training.steps = 1;
      record.trace = predict_experiment(record.experiment).result.trace;
      record.trace.events.resize(std::min<size_t>(record.trace.events.size(), 3));
      record.trace.memory.resize(std::min<size_t>(record.trace.memory.size(), 3));
      StepMetrics step;
      step.step = 0;
      step.loss = 1.0;
      record.trace.steps = {step};
      every_mistake(nlohmann::json::parse(run_to_json(record)),
                    [](const std::string& text) { parse_run(text); });
    }
    for (const char* kind : {"devices/h100", "nodes/dgx-h100"}) {
      QFile file(QStringLiteral(PIPELAB_SOURCE_DIR "/hardware/") + QLatin1String(kind) +
                 QStringLiteral(".json"));
      QVERIFY(file.open(QIODevice::ReadOnly));
      const bool device = std::string(kind).rfind("devices", 0) == 0;
      every_mistake(nlohmann::json::parse(file.readAll().toStdString()),
                    [device](const std::string& text) {
                      if (device)
                        parse_device_spec(text, "mine.json");
                      else
                        parse_node_spec(text, "mine.json");
                    });
    }
    QVERIFY(messages > 1000);
    QVERIFY2(untranslated.isEmpty(),
             qPrintable(QStringList(untranslated.values()).join(QLatin1Char('\n'))));
    // The place before a hardware file's problem is translated as well.
    const QString placed = core_message_text(QStringLiteral(
        "simulation.profile: mine.json: device 'h100': memory_gb = 0 must be a positive "
        "number (GB, 10^9 bytes)"));
    QVERIFY2(placed.startsWith(
                 QStringLiteral("simulation.profile: mine.json: 设备 'h100': memory_gb = 0")),
             qPrintable(placed));
    // A data file's mistake as a run loads it: the CSV cell's line and column are
    // translated with the rest, the file name stays as it is.
    const auto data_error = [](const auto& read) {
      try {
        read();
      } catch (const DataError& error) {
        return QString::fromStdString(error.what());
      }
      return QString();
    };
    const std::string csv = "1,2\n0,abc\n";
    const QString cell = data_error([&] {
      parse_csv_dataset({reinterpret_cast<const uint8_t*>(csv.data()), csv.size()}, "data.csv");
    });
    QVERIFY2(cell.startsWith(QLatin1String("data.csv: line 2, column 2: ")), qPrintable(cell));
    const QString cell_text = core_message_text(cell);
    QVERIFY2(cell_text.startsWith(QStringLiteral("data.csv: 第 2 行第 2 列: 'abc' ")) &&
                 has_chinese(cell_text.mid(cell_text.lastIndexOf(QLatin1Char('\'')))),
             qPrintable(cell_text));
    // An IDX labels file shorter than its header says: the claim's words come out in Chinese.
    const std::vector<uint8_t> labels = {0, 0, 8, 1, 0, 0, 0, 3, 1, 2};
    const QString truncated = data_error([&] { parse_idx_labels(labels, "short.idx"); });
    QVERIFY2(truncated.contains(QLatin1String("header says 3 labels")), qPrintable(truncated));
    QVERIFY2(!core_message_text(truncated).contains(QLatin1String("header says")) &&
                 !core_message_text(truncated).contains(QLatin1String("labels")),
             qPrintable(core_message_text(truncated)));
    // A --search-space value the search cannot use: its place and why are both translated.
    QString search;
    try {
      SearchSpace space;
      restrict_search_space(space, "cp=x");
    } catch (const std::exception& error) {
      search = QString::fromStdString(error.what());
    }
    QVERIFY2(search.startsWith(QLatin1String("search space 'cp=x': 'x' is not a whole number")),
             qPrintable(search));
    const QString search_text = core_message_text(search);
    QVERIFY2(search_text.startsWith(QStringLiteral("搜索空间 'cp=x': 'x' ")) &&
                 !search_text.contains(QLatin1String("whole number")),
             qPrintable(search_text));
    // File > Open of an experiment that is not one says why in Chinese too.
    QTemporaryDir folder;
    const QString broken = folder.filePath(QStringLiteral("broken.json"));
    QFile out(broken);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(R"({"name": "x", "parallel": {"dp": 2, "tpp": 2}})");
    out.close();
    ExperimentDocument document;
    QString error;
    QVERIFY(!document.load(broken, &error));
    QVERIFY2(has_chinese(error.section(QLatin1Char(':'), 1)), qPrintable(error));
  }

  void languageSwitchKeepsThePresetNoteAndTheComparison() {
    MainWindow window;
    window.setSaveQuestion([](const QString&) { return QMessageBox::Discard; });
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    for (int run = 0; run < 2; ++run) {
      window.document()->replace(testing::short_experiment(2), QString(), false);
      QVERIFY2(window.startRun(), qPrintable(window.shownProblems().join('\n')));
      QTRY_VERIFY_WITH_TIMEOUT(window.runController()->phase() == RunController::Phase::Finished,
                               30000);
    }
    QTRY_COMPARE(window.runStore()->count(), 2);
    QVERIFY(window.applyPreset(QStringLiteral("gpipe")));
    QVERIFY(window.presetNote().contains(QStringLiteral("GPipe (pp 4, 8 micro-batches)")));
    window.compareView()->setRuns(1, 0);  // not the default order
    window.compareView()->show();

    QVERIFY(apply_language(kChinese));
    QTRY_VERIFY(menu_titles(window).contains(QStringLiteral("文件(&F)")));
    // The note describes the same preset, now in Chinese.
    QVERIFY2(window.presetNote().contains(QStringLiteral("GPipe（pp 4，8 个微批次）")),
             qPrintable(window.presetNote()));
    // The rebuilt comparison window is up again, in Chinese, on the same runs.
    QVERIFY(window.compareView()->isVisible());
    QCOMPARE(window.compareView()->windowTitle(), QStringLiteral("比较运行 — PipeLab"));
    QCOMPARE(window.compareView()->runA(), 1);
    QCOMPARE(window.compareView()->runB(), 0);
    QCOMPARE(window.runStore()->count(), 2);
  }
  // Every field of every preset, set wrong in each way a file or --set can
  // (0, -1, a fraction, a huge number, a blank or unknown name, a word for a
  // flag), gives problems shown in Chinese: the messages are enumerated from
  // the experiment's fields, so a new field or check cannot slip past. So do
  // every pair of the Parallel panel's numbers at 2, 3 and 4, and the
  // planner's reasons for the splits it prunes.
  void everyMistakeInAFieldIsExplainedInChinese() {
    QVERIFY(apply_language(kChinese));
    QSet<QString> untranslated;
    int messages = 0;
    const auto check = [&](const QString& english) {
      ++messages;
      if (!has_chinese(core_message_text(english))) untranslated.insert(english);
    };
    // `base` with `overrides`, each message on the way checked: the
    // overrides' refusal (they validate), the problems, what Run refuses.
    // The variant when it is valid, else none.
    const auto valid_variant =
        [&check](const Experiment& base,
                 const std::vector<std::string>& overrides) -> std::optional<Experiment> {
      Experiment experiment = base;
      try {
        apply_overrides(experiment, overrides);
      } catch (const std::exception& error) {
        check(QString::fromUtf8(error.what()));
        return std::nullopt;
      }
      const std::vector<std::string> problems = validate_experiment(experiment);
      for (const std::string& problem : problems) check(QString::fromStdString(problem));
      if (!problems.empty()) return std::nullopt;
      try {
        check_trainable(experiment);
      } catch (const std::exception& error) {
        check(QString::fromUtf8(error.what()));  // still a valid file, which predicts
      }
      return experiment;
    };
    for (const Preset& preset : presets(QStringLiteral("en"))) {
      const nlohmann::json document = nlohmann::json::parse(experiment_to_json(preset.experiment));
      std::vector<std::pair<std::string, nlohmann::json>> fields;  // (--set path, value)
      std::function<void(const nlohmann::json&, const std::string&)> walk =
          [&](const nlohmann::json& value, const std::string& path) {
            const std::string prefix = path.empty() ? "" : path + ".";
            if (value.is_object()) {
              for (const auto& [key, member] : value.items()) walk(member, prefix + key);
            } else if (value.is_array() && !value.empty() && value.front().is_object()) {
              for (size_t i = 0; i < value.size(); ++i) walk(value[i], prefix + std::to_string(i));
            } else {
              fields.push_back({path, value});
            }
          };
      walk(document, "");
      for (const auto& [path, value] : fields) {
        std::vector<std::string> wrong;
        if (value.is_number()) wrong = {"0", "-1", "3", "7", "0.5", "1000000", "1e30"};
        if (value.is_boolean()) wrong = {"maybe"};
        if (value.is_string()) wrong = {"bogus", ""};
        for (const std::string& setting : wrong) {
          const std::optional<Experiment> experiment =
              valid_variant(preset.experiment, {path + "=" + setting});
          if (!experiment) continue;
          // A valid file can still fail to predict (and, for a data field,
          // to load its data as Run does).
          try {
            predict_experiment(*experiment);
            if (path.rfind("data.", 0) == 0) TrainingData data(*experiment);
          } catch (const std::exception& error) {
            check(QString::fromUtf8(error.what()));
          }
        }
      }
    }
    // Two parallel fields at once (what the Parallel panel's spin boxes can
    // combine): each pair at 2, 3 and 4.
    const char* const split_fields[] = {"parallel.dp",     "parallel.tp",          "parallel.pp",
                                        "parallel.cp",     "parallel.ep",          "parallel.zero",
                                        "parallel.chunks", "parallel.microbatches"};
    for (const Preset& preset : presets(QStringLiteral("en")))
      for (size_t a = 0; a < std::size(split_fields); ++a)
        for (size_t b = a + 1; b < std::size(split_fields); ++b)
          for (int x : {2, 3, 4})
            for (int y : {2, 3, 4})
              valid_variant(preset.experiment,
                            {std::string(split_fields[a]) + "=" + std::to_string(x),
                             std::string(split_fields[b]) + "=" + std::to_string(y)});
    // The planner's reasons for every plan it prunes (Plan > Search splits).
    for (const char* id : {"megatron-attention", "zero-stages", "expert-parallel"}) {
      const std::optional<Preset> preset = preset_by_id(QString::fromLatin1(id));
      QVERIFY(preset);
      SearchRequest request;
      request.devices = 8;
      request.memory_per_device = int64_t{1} << 30;
      request.max_simulations = 8;
      const SearchResult result = search_splits(preset->experiment, request);
      QVERIFY(!result.pruned.empty());
      for (const PrunedPlan& pruned : result.pruned) check(SplitSearchDialog::whyText(pruned));
    }
    // What a run refuses for this machine's memory, with each set of advice,
    // and a failure on one device.
    for (const char* id : {"gpipe", "gpipe-memory", "megatron-attention"}) {
      const std::optional<Preset> preset = preset_by_id(QString::fromLatin1(id));
      QVERIFY(preset);
      for (bool recompute : {false, true}) {
        Experiment experiment = preset->experiment;
        experiment.parallel.recompute = recompute;
        try {
          check_host_memory(experiment, {int64_t{1} << 40}, int64_t{1} << 30);
          QFAIL("a terabyte does not fit in a gigabyte");
        } catch (const std::exception& error) {
          check(QString::fromUtf8(error.what()));
        }
      }
    }
    check(
        QStringLiteral("device 3: the embedding's vocab = 3 is smaller than data.vocab = 16; "
                       "set model.layers[0].vocab to at least 16"));
    QVERIFY2(messages > 1000, qPrintable(QString::number(messages)));
    QStringList list(untranslated.begin(), untranslated.end());
    list.sort();
    QVERIFY2(list.isEmpty(),
             qPrintable(QStringLiteral("%1 messages without Chinese:\n").arg(list.size()) +
                        list.join('\n')));
  }
};

QTEST_MAIN(TranslationsTest)
#include "translations_test.moc"
