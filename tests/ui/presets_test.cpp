// The course figures as presets: each is a valid experiment that simulates,
// the menu groups every one of them under a topic, and the figures show what
// their text promises (the overhead breakdown, the formula beside the numbers).
#include "ui/models/presets.h"

#include <QFile>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QSet>
#include <QSettings>
#include <QtTest>
#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "core/sim/bubble_formula.h"
#include "core/sim/experiment_prediction.h"
#include "core/trace/overhead_breakdown.h"
#include "ui/exports/trace_export.h"
#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/prediction_updater.h"
#include "ui/models/preset_text.h"
#include "ui/models/run_controller.h"
#include "ui/panels/overhead_view.h"
#include "ui/panels/parallel_panel.h"
#include "ui_test_support.h"

using namespace pipelab;

namespace {

// Every preset id the menu offers, submenu by submenu.
QStringList menu_preset_ids(const MainWindow& window, int* empty_topics) {
  QStringList ids;
  *empty_topics = 0;
  auto* presets_menu = window.findChild<QMenu*>(QStringLiteral("presetsMenu"));
  if (!presets_menu) return ids;
  for (QAction* topic : presets_menu->actions()) {
    if (!topic->menu()) continue;
    const QList<QAction*> actions = topic->menu()->actions();
    if (actions.isEmpty()) ++*empty_topics;
    for (QAction* action : actions) ids << action->data().toString();
  }
  return ids;
}

// The text of shipped preset file `name` (in examples/presets/).
std::string preset_file_text(const QString& name) {
  QFile file(QStringLiteral(":/presets/") + name);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return file.readAll().toStdString();
}

// The {figure} names of a note, in order.
QStringList figures(const QString& text) {
  static const QRegularExpression figure(QStringLiteral("\\{[^{}]*\\}"));
  QStringList found;
  for (auto match = figure.globalMatch(text); match.hasNext();) found << match.next().captured(0);
  return found;
}

double max_load_imbalance(const std::vector<OverheadShares>& shares) {
  double most = 0;
  for (const OverheadShares& share : shares) most = std::max(most, share.load_imbalance);
  return most;
}

}  // namespace

class PresetsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    testing::use_test_settings();
    QSettings().clear();
  }

  void everyFigureIsAValidExperimentThatSimulates() {
    QStringList ids;
    for (const Preset& preset : presets()) {
      QVERIFY2(!ids.contains(preset.id), qPrintable(preset.id + " twice"));
      ids << preset.id;
      const auto problems = validate_experiment(preset.experiment);
      QVERIFY2(problems.empty(),
               qPrintable(preset.id + ": " +
                          QString::fromStdString(problems.empty() ? "" : problems.front())));
      const Prediction prediction = predict_experiment(preset.experiment);
      QVERIFY2(!prediction.result.trace.events.empty(), qPrintable(preset.id));
      QVERIFY2(!preset.title.isEmpty() && !preset.what_to_see.isEmpty(), qPrintable(preset.id));
      // A figure of several runs: every variant is valid, each differs from
      // the others, and each has its own name.
      if (const std::optional<RunSeries>& series = preset.compare) {
        QVERIFY2(series->runs.size() >= 2 && series->runs.size() <= size_t{kMaxComparedRuns},
                 qPrintable(preset.id));
        std::set<std::string> variants;
        QSet<QString> names;
        for (const RunVariant& run : series->runs) {
          const Experiment variant = run.from_first(preset.experiment);
          QVERIFY2(validate_experiment(variant).empty(), qPrintable(preset.id + ": " + run.name));
          variants.insert(experiment_to_json(variant));
          QVERIFY2(!run.name.isEmpty(), qPrintable(preset.id));
          names.insert(run.name);
        }
        QCOMPARE(variants.size(), series->runs.size());
        QCOMPARE(static_cast<size_t>(names.size()), series->runs.size());
      }
    }
    // The course's figures and the classic comparisons, by their stable ids.
    for (const char* id :
         {"naive", "naive-fbu", "backward-twice-forward", "gpipe", "gpipe-overhead-2",
          "gpipe-overhead-4", "gpipe-vs-pipedream-order", "gpipe-memory", "1f1b-memory",
          "interleaved", "zero-bubble", "zb-v", "dualpipev", "pipedream", "pipemare",
          "async-data-parallel", "data-parallel", "batchnorm-data-parallel", "tensor-parallel",
          "offload-vs-recompute", "expert-parallel"})
      QVERIFY2(ids.contains(id), id);
  }

  void theOverheadChartMeasuresARun() {
    MainWindow window;
    window.setSaveQuestion([](const QString&) { return QMessageBox::Discard; });
    QVERIFY(window.applyPreset("gpipe-overhead-2"));
    window.document()->edit([](Experiment& e) { e.training.steps = 2; });
    QVERIFY(window.overheadView()->measuredShares().empty());
    QVERIFY(window.startRun());
    QTRY_VERIFY_WITH_TIMEOUT(!window.runController()->isActive(), 20000);
    QCOMPARE(window.runController()->phase(), RunController::Phase::Finished);
    const std::vector<OverheadShares> measured = window.overheadView()->measuredShares();
    QCOMPARE(measured.size(), size_t{2});
    for (const OverheadShares& share : measured) {
      QVERIFY(std::abs(share.compute + share.recompute + share.collectives + share.load_imbalance +
                       share.bubble - 1) < 1e-9);
      QVERIFY(share.compute > 0 && share.recompute > 0);  // the run recomputed its forwards
      QCOMPARE(share.collectives, 0.0);                     // one replica, one shard
    }
    // The animated timeline shows the run's second step, past the warm-up.
    QString title;
    const Trace animated = trace_to_animate(*window.runController(), *window.predictor(),
                                            QStringLiteral("predicted"), &title);
    QCOMPARE(animated.source, std::string("measured"));
    QVERIFY(!animated.events.empty());
    for (const TraceEvent& event : animated.events) QCOMPARE(event.op.step, 1);
    QVERIFY(title.contains(QStringLiteral("step 2")));
  }

  // What the GPT-2 sequence-parallel preset shows: nearly half of its
  // predicted step is collectives (47% with the blocks' memory-bound kernels
  // at the memory bandwidth and the GEMMs priced by shape), and nothing is
  // left as a bubble (pp 1).
  void theSequenceParallelPresetsOverheadIsCommunication() {
    MainWindow window;
    window.setSaveQuestion([](const QString&) { return QMessageBox::Discard; });
    QVERIFY(window.applyPreset("sequence-parallel"));
    window.predictor()->updateNow();
    QTRY_COMPARE(window.overheadView()->predictedShares().size(), size_t{4});
    const std::vector<OverheadShares> predicted = window.overheadView()->predictedShares();
    for (const OverheadShares& share : predicted) {
      QVERIFY2(share.collectives > 0.4, qPrintable(QString::number(share.collectives)));
      QVERIFY(share.bubble + share.load_imbalance < 1e-9);
    }
    // The parallel panel's predicted bubble says so beside it.
    QLabel* collectives = window.parallelPanel()->collectivesLabel();
    QVERIFY(!collectives->isHidden());
    QVERIFY(collectives->text().contains("in collectives"));
    // A plain pipeline has none to show.
    QVERIFY(window.applyPreset("gpipe"));
    window.predictor()->updateNow();
    QTRY_VERIFY(collectives->isHidden());
  }

  void withoutARunTheAnimationIsThePrediction() {
    MainWindow window;
    QString title;
    const Trace animated = trace_to_animate(*window.runController(), *window.predictor(),
                                            QStringLiteral("predicted"), &title);
    QCOMPARE(animated.source, std::string("simulated"));
    QVERIFY(!animated.events.empty());
    QCOMPARE(title, QStringLiteral("predicted"));
  }

  void everyPresetFileReadsInEveryLanguage() {
    // Each file under examples/presets/ is one preset: it reads, and says
    // every text in English and in Chinese with the same figures.
    QVERIFY2(preset_problems().isEmpty(), qPrintable(preset_problems().join('\n')));
    QCOMPARE(int(presets(QStringLiteral("en")).size()), int(preset_files().size()));
    QVERIFY(preset_files().size() >= 24);
    for (const QString& path : preset_files()) {
      QFile file(path);
      QVERIFY(file.open(QIODevice::ReadOnly));
      const nlohmann::json section = nlohmann::json::parse(file.readAll().toStdString())["preset"];
      std::vector<nlohmann::json> texts = {section["title"], section["what_to_see"]};
      if (section.contains("compare"))
        for (const nlohmann::json& run : section["compare"]["runs"]) texts.push_back(run["name"]);
      for (const nlohmann::json& text : texts) {
        const QString english = QString::fromStdString(text.value("en", ""));
        const QString chinese = QString::fromStdString(text.value("zh_CN", ""));
        QVERIFY2(!english.isEmpty() && !chinese.isEmpty() && english != chinese,
                 qPrintable(path + ": " + english));
        QCOMPARE(figures(chinese), figures(english));
      }
    }
    // The Chinese menu and notes are the files' Chinese texts.
    const std::vector<Preset> english = presets(QStringLiteral("en"));
    const std::vector<Preset> chinese = presets(QStringLiteral("zh_CN"));
    QCOMPARE(chinese.size(), english.size());
    for (size_t i = 0; i < english.size(); ++i) {
      QCOMPARE(chinese[i].id, english[i].id);
      QVERIFY(chinese[i].title != english[i].title);
      QCOMPARE(QString::fromStdString(chinese[i].experiment.name), chinese[i].title);
    }
  }

  void aNotesFiguresComeFromThePredictor() {
    const std::optional<Preset> offload = preset_by_id(QStringLiteral("offload-vs-recompute"));
    QVERIFY(offload);
    QVERIFY2(!offload->what_to_see.contains('{'), qPrintable(offload->what_to_see));
    // The figures are the prediction's, of the preset and of the variants it names.
    const Prediction own = predict_experiment(offload->experiment);
    const QString step_ms =
        QString::number(1000 * own.result.makespan / own.schedule.steps, 'f', 1) + " ms";
    QVERIFY2(offload->what_to_see.contains(step_ms), qPrintable(step_ms + " in " + offload->what_to_see));
    Experiment recompute = offload->experiment;
    apply_overrides(recompute, {"parallel.offload=none", "parallel.recompute=true"});
    const Prediction recomputed = predict_experiment(recompute);
    const QString recompute_peak =
        QString::number(recomputed.result.per_device[0].peak_total_bytes / (1024.0 * 1024.0), 'f', 1) +
        " MiB";
    QVERIFY2(offload->what_to_see.contains(recompute_peak),
             qPrintable(recompute_peak + " in " + offload->what_to_see));
    // Offloading lowers device 0's peak, as the note says.
    Experiment plain = offload->experiment;
    apply_overrides(plain, {"parallel.offload=none"});
    QVERIFY(predict_experiment(plain).result.per_device[0].peak_total_bytes >
            own.result.per_device[0].peak_total_bytes);

    // A figure the predictor does not know, or a variant that cannot be, is refused by name.
    const Experiment experiment = offload->experiment;
    QCOMPARE(expand_prediction_figures(QStringLiteral("{bubble_percent}"), experiment),
             QString::number(100 * own.result.bubble_fraction, 'f', 1));
    for (const QString& wrong : {QStringLiteral("{speed}"), QStringLiteral("{peak_mib.9}"),
                                 QStringLiteral("{step_ms @ parallel.pp=0}")}) {
      try {
        expand_prediction_figures(wrong, experiment);
        QFAIL(qPrintable(wrong + " was accepted"));
      } catch (const ExperimentError& error) {
        QVERIFY2(QString::fromUtf8(error.what()).contains(wrong), error.what());
      }
    }
  }

  void theZeroPresetShardsTheModelStatesByTheFormulas() {
    const std::optional<Preset> zero = preset_by_id(QStringLiteral("zero-stages"));
    QVERIFY(zero);
    // fp32 Adam: 16, 4 + 4 + 8/4, 4 + 12/4 and 16/4 bytes per parameter (zero_sharding.h).
    const auto states = [&](int stage) {
      return expand_prediction_figures(QStringLiteral("{states_mib.0 @ parallel.zero=%1}").arg(stage),
                                       zero->experiment)
          .toDouble();
    };
    const double none = states(0);
    QVERIFY(none > 1);
    QVERIFY2(std::abs(states(1) / none - 10.0 / 16) < 0.01, qPrintable(QString::number(states(1) / none)));
    QVERIFY2(std::abs(states(2) / none - 7.0 / 16) < 0.01, qPrintable(QString::number(states(2) / none)));
    QVERIFY2(std::abs(states(3) / none - 4.0 / 16) < 0.01, qPrintable(QString::number(states(3) / none)));
    QVERIFY(zero->what_to_see.contains(QString::number(none, 'f', 1) + " MiB"));
    // Its compared runs train with ZeRO-1, 2 and 3.
    QVERIFY(zero->compare);
    QCOMPARE(zero->compare->runs.size(), size_t{4});
    for (int stage = 0; stage <= 3; ++stage)
      QCOMPARE(zero->compare->runs[stage].from_first(zero->experiment).parallel.zero, stage);
  }

  void theFsdpPresetShowsTheTrafficZeroThreeAdds() {
    const std::optional<Preset> fsdp = preset_by_id(QStringLiteral("fsdp"));
    QVERIFY(fsdp);
    QCOMPARE(fsdp->experiment.parallel.zero, 3);
    const auto figure = [&](const QString& name) {
      return expand_prediction_figures(QLatin1Char('{') + name + QLatin1Char('}'), fsdp->experiment)
          .toDouble();
    };
    // The weights are gathered for each micro-batch's forward and again for
    // its backward: with one micro-batch 1.5 times what ZeRO-2 (and plain
    // data parallelism) send, the ZeRO paper's figure; with the preset's
    // two, twice (ZeRO-2 scatters each micro-batch's gradients, gathers once).
    const double one_three = figure(QStringLiteral("sent_mib.0 @ parallel.microbatches=1"));
    const double one_two =
        figure(QStringLiteral("sent_mib.0 @ parallel.zero=2, parallel.microbatches=1"));
    QVERIFY2(one_two > 0.5, qPrintable(QString::number(one_two)));
    QVERIFY2(std::abs(one_three / one_two - 1.5) < 0.05,
             qPrintable(QString::number(one_three / one_two)));
    QCOMPARE(fsdp->experiment.parallel.microbatches, 2);
    const double three = figure(QStringLiteral("sent_mib.0"));
    const double two = figure(QStringLiteral("sent_mib.0 @ parallel.zero=2"));
    QVERIFY2(std::abs(three / two - 2.0) < 0.05, qPrintable(QString::number(three / two)));
    // And holds half the model states of ZeRO-0 at dp 2 (16/2 against 16 bytes).
    const double states = figure(QStringLiteral("states_mib.0"));
    const double none = figure(QStringLiteral("states_mib.0 @ parallel.zero=0"));
    QVERIFY2(std::abs(states / none - 0.5) < 0.02, qPrintable(QString::number(states / none)));
    QVERIFY(fsdp->compare);
    QCOMPARE(fsdp->compare->runs.at(1).from_first(fsdp->experiment).parallel.zero, 2);
  }

  void theContextParallelPresetSplitsTheActivationsAndShowsTheRing() {
    const std::optional<Preset> ring = preset_by_id(QStringLiteral("context-parallel"));
    QVERIFY(ring);
    const Experiment& experiment = ring->experiment;
    const int cp = experiment.parallel.cp;
    QCOMPARE(cp, 4);
    const auto figure = [&](const QString& name) {
      return expand_prediction_figures(QLatin1Char('{') + name + QLatin1Char('}'), experiment)
          .toDouble();
    };
    // A rank keeps about 1/cp of one device's activations, plus the whole
    // sequence's K and V while a block attends.
    const double split = figure(QStringLiteral("activations_mib.0"));
    const double whole = figure(QStringLiteral("activations_mib.0 @ parallel.cp=1"));
    QVERIFY2(split > whole / cp && split < 0.4 * whole,
             qPrintable(QString::number(split) + " of " + QString::number(whole)));
    // Per block, a forward all-gather and a backward all-gather and
    // reduce-scatter of the micro-batch's whole K and V (2 s h fp32 values a
    // sample), each sending (cp - 1) / cp of it.
    int64_t blocks = 0, width = 0;
    for (const LayerSpec& layer : experiment.model.layers) {
      if (layer.type == LayerType::TransformerBlock) ++blocks;  // repeats are expanded
      if (layer.type == LayerType::Embedding) width = layer.dim;
    }
    const double key_values =
        2.0 * experiment.model.input.front() * width * 4 * experiment.training.batch_size;
    const double expected = blocks * 3 * key_values * (cp - 1) / cp / (1 << 20);
    QVERIFY2(std::abs(figure(QStringLiteral("ring_mib.0")) - expected) < 0.05,
             qPrintable(QString::number(figure(QStringLiteral("ring_mib.0"))) + " against " +
                        QString::number(expected)));
    QVERIFY(ring->what_to_see.contains(QString::number(split, 'f', 1) + " MiB"));
    QVERIFY(ring->compare);
    QCOMPARE(ring->compare->runs.at(1).from_first(experiment).parallel.cp, 1);
  }

  void aMalformedPresetFileSaysWhatIsWrong() {
    const std::string gpipe = preset_file_text(QStringLiteral("04-gpipe.json"));
    QVERIFY(!gpipe.empty());
    const auto problem = [&](const std::function<void(nlohmann::json&)>& change) -> QString {
      nlohmann::json document = nlohmann::json::parse(gpipe);
      change(document);
      try {
        parse_preset(document.dump(), QStringLiteral("en"));
      } catch (const ExperimentError& error) {
        return QString::fromUtf8(error.what());
      }
      return {};
    };
    QVERIFY(problem([](nlohmann::json&) {}).isEmpty());
    QVERIFY(problem([](nlohmann::json& d) { d["preset"]["topic"] = "memry"; })
                .contains("preset.topic: 'memry' is not a topic; use pipeline-schedules, memory"));
    QVERIFY(problem([](nlohmann::json& d) { d["preset"]["title"].erase("en"); })
                .contains("preset.title: needs its English text"));
    QVERIFY(problem([](nlohmann::json& d) { d["preset"]["colour"] = "red"; })
                .contains("preset.colour: is not a preset field"));
    QVERIFY(problem([](nlohmann::json& d) { d["preset"].erase("id"); }).contains("preset.id: needs a text"));
    QVERIFY(problem([](nlohmann::json& d) {
              d["preset"]["compare"] = {{"first", {{"en", "a"}}}, {"second", {{"en", "b"}}},
                                        {"set", {"parallel.pp=0"}}};
            }).contains("preset.compare.set"));
    // A comparison of several runs: 2 to 4 of them, each its own name, each
    // override applying; the two-run form above reads too.
    const auto run = [](const char* name, std::vector<std::string> set) {
      return nlohmann::json{{"name", {{"en", name}}}, {"set", set}};
    };
    QVERIFY(problem([&](nlohmann::json& d) {
              d["preset"]["compare"] = {
                  {"first", {{"en", "a"}}}, {"second", {{"en", "b"}}}, {"set", {"parallel.pp=2"}}};
            }).isEmpty());
    QVERIFY(problem([&](nlohmann::json& d) {
              d["preset"]["compare"] = {{"runs",
                                         {run("a", {}), run("b", {"parallel.pp=2"}),
                                          run("c", {"parallel.microbatches=4"})}}};
            }).isEmpty());
    QVERIFY(problem([&](nlohmann::json& d) {
              d["preset"]["compare"] = {{"runs", {run("a", {})}}};
            }).contains("preset.compare.runs: needs 2 to 4 runs"));
    QVERIFY(problem([&](nlohmann::json& d) {
              d["preset"]["compare"] = {{"runs", {run("a", {}), run("a", {"parallel.pp=2"})}}};
            }).contains("preset.compare.runs[1].name: is the name of run 0 too"));
    QVERIFY(problem([&](nlohmann::json& d) {
              d["preset"]["compare"] = {{"runs", {run("a", {}), run("b", {"parallel.pp=0"})}}};
            }).contains("preset.compare.runs[1].set"));
    QVERIFY(problem([](nlohmann::json& d) { d.erase("preset"); }).contains("preset: missing"));
    // The experiment's own mistakes are the experiment file's messages.
    QVERIFY(problem([](nlohmann::json& d) { d["parallel"]["microbatches"] = 7; }).contains("microbatches"));
  }

  void theMenuGroupsEveryPresetByTopic() {
    MainWindow window;
    int empty_topics = -1;
    const QStringList in_menu = menu_preset_ids(window, &empty_topics);
    QCOMPARE(empty_topics, 0);
    QStringList expected;
    for (const Preset& preset : presets()) expected << preset.id;
    QCOMPARE(in_menu.size(), expected.size());  // each exactly once
    for (const QString& id : expected) QVERIFY2(in_menu.contains(id), qPrintable(id));
    for (PresetTopic topic : kPresetTopics) QVERIFY(!preset_topic_title(topic).isEmpty());
  }

  void theFiguresShowWhatTheirTextSays() {
    MainWindow window;
    window.setSaveQuestion([](const QString&) { return QMessageBox::Discard; });
    // The unit-cost figures: B twice F, and the F/B/U pipeline with a visible U.
    QVERIFY(window.applyPreset("backward-twice-forward"));
    window.predictor()->updateNow();
    const auto duration_of = [&](OpKind kind) {
      for (const TraceEvent& e : window.predictor()->prediction()->result.trace.events)
        if (e.op.kind == kind) return e.t_end - e.t_begin;
      return -1.0;
    };
    QCOMPARE(duration_of(OpKind::Backward), 2 * duration_of(OpKind::Forward));
    QVERIFY(window.applyPreset("naive-fbu"));
    window.predictor()->updateNow();
    QCOMPARE(duration_of(OpKind::Update), duration_of(OpKind::Forward));
    QCOMPARE(window.predictor()->prediction()->result.makespan, 9.0);  // p(f+b)+u, as it says

    // The overhead breakdown: 2 partitions balanced, 4 not; recomputation shows.
    QVERIFY(window.applyPreset("gpipe-overhead-2"));
    window.predictor()->updateNow();
    QVERIFY(window.presetNote().contains(QStringLiteral("1/9")));
    QVERIFY(std::abs(window.overheadView()->formulaBubble() - 1.0 / 9) < 1e-12);  // its line
    const std::vector<OverheadShares> two = window.overheadView()->predictedShares();
    QCOMPARE(two.size(), size_t{2});
    for (const OverheadShares& share : two) {
      QVERIFY(std::abs(share.compute + share.recompute + share.load_imbalance + share.bubble - 1) <
              1e-9);
      QVERIFY(share.recompute > 0);
    }
    QVERIFY(window.applyPreset("gpipe-overhead-4"));
    window.predictor()->updateNow();
    const std::vector<OverheadShares> four = window.overheadView()->predictedShares();
    QCOMPARE(four.size(), size_t{4});
    QVERIFY(max_load_imbalance(four) > 0.05);
    // The light ends (2 hidden layers each) wait for the heavy middle (3 each).
    QVERIFY(four[0].load_imbalance > 0.05 && four[3].load_imbalance > 0.05);
    QVERIFY(four[1].load_imbalance < 0.01 || four[2].load_imbalance < 0.01);
    QVERIFY(max_load_imbalance(four) > 5 * max_load_imbalance(two));
    QVERIFY(four.front().bubble > two.front().bubble);

    // GPipe vs PipeDream order: the same bubble in unit time, the formula's.
    QVERIFY(window.applyPreset("gpipe-vs-pipedream-order"));
    window.predictor()->updateNow();
    QCOMPARE(window.document()->experiment().parallel.schedule, ScheduleKind::OneFOneB);
    QVERIFY(std::abs(window.predictor()->prediction()->result.bubble_fraction -
                     theoretical_bubble(ScheduleKind::GPipe, 4, 8, 1, UnitCosts{})) < 1e-9);

    // GPipe vs DAPPLE memory: device 0 holds all m = 16 micro-batches'
    // activations under GPipe, at most p = 4 under 1F1B.
    const auto device0_activations = [&] {
      window.predictor()->updateNow();
      return double(
          window.predictor()->prediction()->result.per_device[0].peak_bytes[static_cast<size_t>(
              MemoryCategory::Activations)]);
    };
    QVERIFY(window.applyPreset("gpipe-memory"));
    const double gpipe_peak = device0_activations();
    QVERIFY(window.applyPreset("1f1b-memory"));
    const double dapple_peak = device0_activations();
    QVERIFY(gpipe_peak > 3 * dapple_peak);

    // Sync vs async data parallel: the same replicas, the update differs.
    QVERIFY(window.applyPreset("async-data-parallel"));
    QCOMPARE(window.document()->experiment().parallel.update, UpdateMode::Async);
    QCOMPARE(window.document()->experiment().parallel.dp, 4);
    QVERIFY(window.applyPreset("data-parallel"));
    QCOMPARE(window.document()->experiment().parallel.update, UpdateMode::Sync);

    // Opening something else takes the preset's note away.
    window.newExperiment();
    QVERIFY(window.presetNote().isEmpty());
  }
};

QTEST_MAIN(PresetsTest)
#include "presets_test.moc"
