#include "ui/main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>
#include <cmath>

#include "core/io/experiment_io.h"
#include "core/io/run_file.h"
#include "ui/core_message_text.h"
#include "ui/exports/export_actions.h"
#include "ui/language.h"
#include "ui/models/experiment_document.h"
#include "ui/models/plan_controller.h"
#include "ui/models/prediction_updater.h"
#include "ui/models/presets.h"
#include "ui/models/replay_updater.h"
#include "ui/models/run_series_controller.h"
#include "ui/models/run_store.h"
#include "ui/panels/compare_view.h"
#include "ui/panels/data_panel.h"
#include "ui/panels/expert_load_chart.h"
#include "ui/panels/memory_view.h"
#include "ui/panels/model_panel.h"
#include "ui/panels/overhead_view.h"
#include "ui/panels/parallel_panel.h"
#include "ui/panels/plan_dialog.h"
#include "ui/panels/preset_note.h"
#include "ui/panels/problem_label.h"
#include "ui/panels/split_search_dialog.h"
#include "ui/panels/stats_panel.h"
#include "ui/panels/training_view.h"
#include "ui/panels/wheel_needs_focus.h"
#include "ui/runs_menu.h"
#include "ui/timeline/timeline_view.h"

namespace pipelab {
namespace {

constexpr int kMaxRecentFiles = 8;
constexpr int kStatusMessageMs = 15000;
// The charts below the timeline (memory, loss, statistics): tall enough for the
// memory chart's two panes to show a saw-tooth, leaving the timeline most of
// a 950-pixel window.
constexpr int kDefaultChartDockHeight = 330;
const char* const kRecentFilesKey = "recentFiles";
const char* const kGeometryKey = "window/geometry";
const char* const kStateKey = "window/state";
const char* const kSpeedKey = "playbackSpeed";
constexpr double kDefaultSpeed = 0.01;

// Playback speeds offered in the toolbar: trace seconds per wall-clock second.
struct SpeedChoice {
  const char* text;
  double speed;
};
constexpr SpeedChoice kSpeeds[] = {
    {QT_TRANSLATE_NOOP("pipelab::MainWindow", "Live"), RunController::kLive},
    {QT_TRANSLATE_NOOP("pipelab::MainWindow", "1× (real time)"), 1.0},
    {QT_TRANSLATE_NOOP("pipelab::MainWindow", "1/10×"), 0.1},
    {QT_TRANSLATE_NOOP("pipelab::MainWindow", "1/100×"), 0.01},
    {QT_TRANSLATE_NOOP("pipelab::MainWindow", "1/1000× (1 ms in 1 s)"), 0.001},
    {QT_TRANSLATE_NOOP("pipelab::MainWindow", "1/10000× (1 ms in 10 s)"), 0.0001},
};

// A panel in a dock, scrollable so small screens can still reach every field.
QDockWidget* make_dock(const QString& title, const QString& object_name, QWidget* content,
                       QWidget* parent, bool scroll) {
  auto* dock = new QDockWidget(title, parent);
  dock->setObjectName(object_name);
  if (scroll) {
    WheelNeedsFocus::install_in(content);
    auto* area = new QScrollArea(dock);
    area->setWidget(content);
    area->setWidgetResizable(true);
    area->setFrameShape(QFrame::NoFrame);
    dock->setWidget(area);
  } else {
    dock->setWidget(content);
  }
  return dock;
}

}  // namespace

MainWindow::MainWindow(const GpuAvailability& gpus, QWidget* parent)
    : QMainWindow(parent), gpus_(gpus) {
  setObjectName(QStringLiteral("PipeLabMainWindow"));
  document_ = new ExperimentDocument(this);
  predictor_ = new PredictionUpdater(document_, this);
  run_ = new RunController(this);
  planner_ = new PlanController(document_, this);
  replay_updater_ = new ReplayUpdater(this);
  replay_updater_->setRunController(run_);

  run_store_ = new RunStore(this);  // the runs outlive a rebuilt window (language change)
  run_series_ = new RunSeriesController(run_, run_store_, this);
  run_status_label_ = new QLabel;
  statusBar()->addPermanentWidget(run_status_label_);

  buildViews();

  connect(document_, &ExperimentDocument::dirtyChanged, this, &MainWindow::updateTitle);
  connect(document_, &ExperimentDocument::filePathChanged, this, &MainWindow::updateTitle);
  connect(document_, &ExperimentDocument::changed, this, [this] {
    updateTitle();
    // An edit answers a failed run's complaint (or makes it moot).
    if (!run_problem_.isEmpty() && !run_->isActive()) {
      run_problem_.clear();
      distributeProblems();
    }
  });
  connect(predictor_, &PredictionUpdater::updated, this, &MainWindow::onPredictionUpdated);
  connect(replay_updater_, &ReplayUpdater::updated, this, [this] {
    timeline_view_->setReplay(replay_updater_->replay());
    stats_panel_->setReplay(replay_updater_->replay());
  });
  connect(run_, &RunController::phaseChanged, this, &MainWindow::onRunPhaseChanged);
  connect(run_, &RunController::attached, this, [this](const Experiment& experiment) {
    document_->replace(experiment, QString(), false);
    statusBar()->showMessage(tr("Attached: %1").arg(QString::fromStdString(experiment.name)),
                             kStatusMessageMs);
  });
  connect(planner_, &PlanController::planningChanged, this, [this](bool planning) {
    if (planning) statusBar()->showMessage(tr("Planning…"));
    updateRunActions();
  });
  connect(planner_, &PlanController::planApplied, this, [this](const QString& summary) {
    resetRun();  // a measured timeline of the old split would no longer match
    setNotice({});
    statusBar()->showMessage(summary, 60000);
  });
  connect(planner_, &PlanController::planFailed, this, [this](const QString& reason) {
    setNotice(tr("Plan for me: %1").arg(reason));
    statusBar()->showMessage(tr("No plan: %1").arg(reason), kStatusMessageMs);
  });
  connect(planner_, &PlanController::undoAvailable, this, [this] { updateRunActions(); });
  connect(run_, &RunController::failed, this, &MainWindow::onRunFailed);
  connect(run_, &RunController::traceGrew, this, &MainWindow::updateRunActions);
  connect(run_, &RunController::message, this, [this](const QString& text) {
    statusBar()->showMessage(core_message_text(text), kStatusMessageMs);
  });
  connect(run_, &RunController::recordingLimitReached, this, &MainWindow::setNotice);
  connect(run_series_, &RunSeriesController::nextStarted, this,
          [this](int part, const QString& name) {
            statusBar()->showMessage(
                tr("Run %1 of %2: %3").arg(part).arg(run_series_->runCount()).arg(name),
                kStatusMessageMs);
          });
  connect(run_series_, &RunSeriesController::finished, this, &MainWindow::showSeriesComparison);
  connect(run_series_, &RunSeriesController::ended, this, [this](const QString& reason) {
    updateRunActions();
    // A failed run's own message stays in the status bar; the panels show it too.
    if (run_->phase() != RunController::Phase::Failed)
      statusBar()->showMessage(reason, kStatusMessageMs);
  });

  save_question_ = [this](const QString& name) {
    return QMessageBox::warning(
        this, tr("Unsaved changes"),
        tr("“%1” has changes that are not saved. Save them first?").arg(name),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  };

  resize(1500, 950);
  restoreSettings();
  onPredictionUpdated();
  updateTitle();
  updateRunActions();
}

MainWindow::~MainWindow() = default;

// --- building -------------------------------------------------------------

void MainWindow::buildViews() {
  // Everything built here shows text; a language change builds it again
  // (rebuildViews). The actions belong to view_objects_.
  view_objects_ = new QObject(this);
  model_panel_ = new ModelPanel(document_);
  parallel_panel_ = new ParallelPanel(document_, gpus_);
  data_panel_ = new DataPanel(document_);
  timeline_view_ = new TimelineView;
  memory_view_ = new MemoryView;
  training_view_ = new TrainingView;
  expert_load_chart_ = new ExpertLoadChart;
  training_view_->setExpertLoadChart(expert_load_chart_);
  stats_panel_ = new StatsPanel;
  overhead_view_ = new OverheadView;
  timeline_view_->setRunController(run_);
  memory_view_->setRunController(run_);
  training_view_->setRunController(run_);
  stats_panel_->setRunController(run_);
  overhead_view_->setRunController(run_);
  // The comparison is a window of its own: two timelines and the curves need the room.
  compare_view_ = new CompareView(this);
  compare_view_->setWindowFlag(Qt::Window);
  compare_view_->setWindowTitle(tr("Compare runs — PipeLab"));
  compare_view_->resize(1400, 950);
  compare_view_->setRunStore(run_store_);
  runs_menu_ = new RunsMenu(run_store_, compare_view_, run_, this);

  // The centre: a notice bar (file errors) above the timeline.
  notice_label_ = new ProblemLabel;
  notice_label_->setToolTip(tr("Click to dismiss"));
  notice_label_->setCursor(Qt::PointingHandCursor);
  notice_label_->installEventFilter(this);
  auto* centre = new QWidget;
  auto* centre_layout = new QVBoxLayout(centre);
  centre_layout->setContentsMargins(4, 2, 4, 0);
  centre_layout->addWidget(notice_label_);
  preset_note_ = new PresetNote;
  centre_layout->addWidget(preset_note_);
  centre_layout->addWidget(timeline_view_, 1);
  setCentralWidget(centre);  // deletes the previous centre

  buildActions();
  buildToolbar();
  buildMenus();
  buildDocks();
}

void MainWindow::rebuildViews() {
  rebuild_pending_ = false;
  const QByteArray layout = saveState();
  const TimelineView::Arrangement arrangement = timeline_view_->arrangement();
  const QString shown_notice = notice();
  // Take the views down; the document, the run, the prediction and the replay stay.
  for (QDockWidget* dock : findChildren<QDockWidget*>(Qt::FindDirectChildrenOnly)) {
    removeDockWidget(dock);
    delete dock;
  }
  for (QToolBar* toolbar : findChildren<QToolBar*>(Qt::FindDirectChildrenOnly)) delete toolbar;
  setMenuBar(new QMenuBar(this));  // the old bar goes, with its menus
  // The comparison window comes back where it was, on the runs it compared.
  const bool comparison_shown = compare_view_->isVisible();
  const QByteArray comparison_geometry = compare_view_->saveGeometry();
  const QList<int> compared = compare_view_->runs();
  delete runs_menu_;
  delete compare_view_;  // before the export actions it shows
  delete view_objects_;
  delete exports_;
  buildViews();
  compare_view_->setRuns(compared);
  compare_view_->restoreGeometry(comparison_geometry);
  if (comparison_shown) compare_view_->show();
  showPresetNote(shown_preset_id_);

  // Once the old centre is gone and the new panels are laid out: restored
  // at once, the left docks grew by a few hundred pixels at every switch.
  QTimer::singleShot(0, this, [this, layout] { restoreState(layout); });
  timeline_view_->setArrangement(arrangement);
  setNotice(shown_notice);
  if (!run_problem_.isEmpty()) training_view_->setRunError(runStoppedText());
  timeline_view_->setReplay(replay_updater_->replay());
  stats_panel_->setReplay(replay_updater_->replay());
  rebuildRecentMenu();
  onPredictionUpdated();
  onRunPhaseChanged(run_->phase());
  updateTitle();
}

void MainWindow::setLanguage(const QString& code) {
  // Every window then gets a LanguageChange event (changeEvent).
  if (apply_language(code)) remember_language(code);
}

void MainWindow::changeEvent(QEvent* event) {
  // Installing a translator sends one event per translator: build once.
  if (event->type() == QEvent::LanguageChange && !rebuild_pending_) {
    rebuild_pending_ = true;
    QTimer::singleShot(0, this, &MainWindow::rebuildViews);
  }
  QMainWindow::changeEvent(event);
}

void MainWindow::buildActions() {
  QStyle* look = style();
  new_action_ = new QAction(tr("&New"), view_objects_);
  new_action_->setShortcut(QKeySequence::New);
  connect(new_action_, &QAction::triggered, this, &MainWindow::newExperiment);
  open_action_ =
      new QAction(look->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open…"), view_objects_);
  open_action_->setShortcut(QKeySequence::Open);
  connect(open_action_, &QAction::triggered, this, &MainWindow::openWithDialog);
  save_action_ =
      new QAction(look->standardIcon(QStyle::SP_DialogSaveButton), tr("&Save"), view_objects_);
  save_action_->setShortcut(QKeySequence::Save);
  connect(save_action_, &QAction::triggered, this, &MainWindow::save);
  save_as_action_ = new QAction(tr("Save &As…"), view_objects_);
  save_as_action_->setShortcut(QKeySequence::SaveAs);
  connect(save_as_action_, &QAction::triggered, this, &MainWindow::saveAsWithDialog);
  quit_action_ = new QAction(tr("&Quit"), view_objects_);
  quit_action_->setShortcut(QKeySequence::Quit);
  connect(quit_action_, &QAction::triggered, this, &QWidget::close);

  run_action_ = new QAction(look->standardIcon(QStyle::SP_MediaPlay), tr("&Run"), view_objects_);
  run_action_->setShortcut(QKeySequence(Qt::Key_Space));
  run_action_->setToolTip(tr("Run or pause training (Space)"));
  connect(run_action_, &QAction::triggered, this, &MainWindow::runOrPause);
  step_action_ =
      new QAction(look->standardIcon(QStyle::SP_MediaSeekForward), tr("S&tep"), view_objects_);
  step_action_->setShortcut(QKeySequence(Qt::Key_Right));
  step_action_->setToolTip(tr("Run one training step, then pause (→)"));
  connect(step_action_, &QAction::triggered, this, &MainWindow::stepOnce);
  stop_action_ = new QAction(look->standardIcon(QStyle::SP_MediaStop), tr("St&op"), view_objects_);
  stop_action_->setShortcut(QKeySequence(Qt::Key_Escape));
  stop_action_->setToolTip(tr("Stop the run; what was recorded stays (Esc)"));
  connect(stop_action_, &QAction::triggered, this, &MainWindow::stopRun);
  reset_action_ =
      new QAction(look->standardIcon(QStyle::SP_BrowserReload), tr("R&eset"), view_objects_);
  reset_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  reset_action_->setToolTip(tr("Stop and clear the measured run (Ctrl+R)"));
  connect(reset_action_, &QAction::triggered, this, &MainWindow::resetRun);
  plan_action_ = new QAction(tr("&Plan for me…"), view_objects_);
  plan_action_->setToolTip(
      tr("Choose dp, pp, the split and the micro-batches for a number of devices"));
  connect(plan_action_, &QAction::triggered, this, &MainWindow::planWithDialog);
  undo_plan_action_ = new QAction(tr("&Undo plan"), view_objects_);
  undo_plan_action_->setToolTip(tr("Put back the parallel settings the last plan replaced"));
  connect(undo_plan_action_, &QAction::triggered, planner_, &PlanController::undo);
  parallel_panel_->setPlanAction(plan_action_);
  split_search_action_ = new QAction(tr("&Search every split…"), view_objects_);
  split_search_action_->setToolTip(
      tr("Search tp, cp, pp, dp, ZeRO, schedule, recompute and micro-batches for a cluster, "
         "and see every candidate's memory against its throughput"));
  connect(split_search_action_, &QAction::triggered, this, &MainWindow::openSplitSearch);

  for (QAction* action : {run_action_, step_action_, stop_action_, reset_action_}) {
    // Window-wide, so the keys work wherever the focus is (text fields keep Space).
    action->setShortcutContext(Qt::WindowShortcut);
    addAction(action);
  }

  exports_ = new ExportActions({timeline_view_, memory_view_, training_view_, run_, predictor_,
                                compare_view_, overhead_view_},
                               this);
  connect(exports_, &ExportActions::failed, this, &MainWindow::setNotice);
  compare_view_->setExportAction(exports_->comparisonAction());
  connect(exports_, &ExportActions::wrote, this,
          [this](const QString& text) { statusBar()->showMessage(text, kStatusMessageMs); });
}

void MainWindow::buildToolbar() {
  QToolBar* toolbar = addToolBar(tr("Run"));
  toolbar->setObjectName(QStringLiteral("runToolbar"));
  toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  toolbar->addAction(run_action_);
  toolbar->addAction(step_action_);
  toolbar->addAction(stop_action_);
  toolbar->addAction(reset_action_);
  toolbar->addSeparator();
  toolbar->addWidget(new QLabel(tr(" Playback speed: ")));
  speed_combo_ = new QComboBox;
  for (const SpeedChoice& choice : kSpeeds) speed_combo_->addItem(tr(choice.text), choice.speed);
  // A small model's step takes well under a millisecond: by default replay at
  // 1/100 so a first run visibly unfolds; the last choice is remembered.
  const int remembered =
      speed_combo_->findData(QSettings().value(kSpeedKey, kDefaultSpeed).toDouble());
  speed_combo_->setCurrentIndex(remembered >= 0 ? remembered
                                                : speed_combo_->findData(kDefaultSpeed));
  speed_combo_->setToolTip(
      tr("Events are recorded as they happen; the charts replay them at this speed. At 1/1000×, "
         "one millisecond of training takes one second on screen. Live shows the newest events."));
  connect(speed_combo_, &QComboBox::currentIndexChanged, this, [this] {
    const double speed = speed_combo_->currentData().toDouble();
    run_->setPlaybackSpeed(speed);
    QSettings().setValue(kSpeedKey, speed);
  });
  run_->setPlaybackSpeed(speed_combo_->currentData().toDouble());
  toolbar->addWidget(speed_combo_);
  auto* catch_up = toolbar->addAction(tr("Jump to live"));
  catch_up->setToolTip(tr("Show everything recorded so far"));
  connect(catch_up, &QAction::triggered, run_, &RunController::catchUp);
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(new_action_);
  file->addAction(open_action_);
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  file->addAction(save_action_);
  file->addAction(save_as_action_);
  file->addSeparator();
  QMenu* export_menu = file->addMenu(tr("&Export"));
  export_menu->setObjectName(QStringLiteral("exportMenu"));
  exports_->addTo(export_menu);
  file->addSeparator();
  file->addAction(quit_action_);

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addAction(run_action_);
  run->addAction(step_action_);
  run->addAction(stop_action_);
  run->addAction(reset_action_);

  QMenu* runs = menuBar()->addMenu(tr("R&uns"));
  runs->setObjectName(QStringLiteral("runsMenu"));
  runs_menu_->setMenu(runs);
  connect(runs_menu_, &RunsMenu::failed, this, &MainWindow::setNotice);
  connect(runs_menu_, &RunsMenu::wrote, this,
          [this](const QString& text) { statusBar()->showMessage(text, kStatusMessageMs); });

  QMenu* plan = menuBar()->addMenu(tr("P&lan"));
  plan->addAction(plan_action_);
  plan->addAction(split_search_action_);
  plan->addAction(undo_plan_action_);

  QMenu* presets_menu = menuBar()->addMenu(tr("&Presets"));
  presets_menu->setObjectName(QStringLiteral("presetsMenu"));
  const std::vector<Preset> all_presets = presets();
  for (PresetTopic topic : kPresetTopics) {
    QMenu* topic_menu = presets_menu->addMenu(preset_topic_title(topic));
    topic_menu->setToolTipsVisible(true);
    for (const Preset& preset : all_presets) {
      if (preset.topic != topic) continue;
      QAction* action = topic_menu->addAction(preset.title);
      action->setToolTip(preset.what_to_see);
      action->setData(preset.id);  // for tests and scripts
      const QString id = preset.id;
      connect(action, &QAction::triggered, this, [this, id] { applyPreset(id); });
    }
  }

  view_menu_ = menuBar()->addMenu(tr("&View"));
  QMenu* arrangement = view_menu_->addMenu(tr("Timelines"));
  auto* group = new QActionGroup(arrangement);
  const std::pair<QString, TimelineView::Arrangement> arrangements[] = {
      {tr("Predicted under measured"), TimelineView::Arrangement::PredictedUnder},
      {tr("Predicted beside measured"), TimelineView::Arrangement::PredictedBeside},
      {tr("Measured only"), TimelineView::Arrangement::MeasuredOnly},
      {tr("Predicted only"), TimelineView::Arrangement::PredictedOnly},
      {tr("Replayed under measured"), TimelineView::Arrangement::ReplayedUnder},
      {tr("Predicted under replayed"), TimelineView::Arrangement::PredictedUnderReplayed},
      {tr("Measured, replayed and predicted"), TimelineView::Arrangement::AllThree}};
  for (const auto& [text, value] : arrangements) {
    QAction* action = arrangement->addAction(text);
    action->setCheckable(true);
    action->setChecked(value == timeline_view_->arrangement());
    group->addAction(action);
    const auto chosen = value;
    connect(action, &QAction::triggered, this,
            [this, chosen] { timeline_view_->setArrangement(chosen); });
    // The menu's check mark follows the Show combo too.
    connect(timeline_view_, &TimelineView::arrangementChanged, action,
            [action, chosen](TimelineView::Arrangement now) { action->setChecked(now == chosen); });
  }
  QMenu* language_menu = view_menu_->addMenu(tr("&Language"));
  language_menu->setObjectName(QStringLiteral("languageMenu"));
  auto* language_group = new QActionGroup(language_menu);
  for (const Language& language : languages()) {
    QAction* action = language_menu->addAction(language.name);
    action->setCheckable(true);
    action->setChecked(language.code == current_language());
    language_group->addAction(action);
    const QString code = language.code;
    connect(action, &QAction::triggered, this, [this, code] { setLanguage(code); });
  }
  view_menu_->addSeparator();

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Keyboard shortcuts"), this, [this] {
    QMessageBox::information(
        this, tr("Keyboard shortcuts"),
        tr("Space: run / pause\n→: one training step\nEsc: stop\nCtrl+R: reset\n"
           "Ctrl+N / Ctrl+O / Ctrl+S: new, open, save\n\n"
           "Timeline: drag to pan, wheel to zoom, double-click to fit, hover for details."));
  });
  help->addAction(tr("&About PipeLab"), this, [this] {
    QMessageBox::about(
        this, tr("About PipeLab"),
        tr("<b>PipeLab</b> %1<br>See and try distributed deep-learning training: data, tensor "
           "and pipeline parallelism, their schedules, bubbles and memory.<br><br>"
           "Licensed under the GNU GPL, version 3 or later. Charts by QCustomPlot (GPL-3.0+).")
            .arg(QApplication::applicationVersion()));
  });
}

void MainWindow::buildDocks() {
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks |
                 QMainWindow::AllowNestedDocks);
  QDockWidget* parallel =
      make_dock(tr("Parallelism"), QStringLiteral("parallelDock"), parallel_panel_, this, true);
  QDockWidget* model =
      make_dock(tr("Model"), QStringLiteral("modelDock"), model_panel_, this, false);
  QDockWidget* data =
      make_dock(tr("Data and training"), QStringLiteral("dataDock"), data_panel_, this, true);
  QDockWidget* memory =
      make_dock(tr("Memory"), QStringLiteral("memoryDock"), memory_view_, this, false);
  QDockWidget* training =
      make_dock(tr("Training"), QStringLiteral("trainingDock"), training_view_, this, false);
  QDockWidget* expert_load = make_dock(tr("Expert load"), QStringLiteral("expertLoadDock"),
                                       expert_load_chart_, this, false);
  QDockWidget* stats =
      make_dock(tr("Statistics"), QStringLiteral("statsDock"), stats_panel_, this, false);
  QDockWidget* overhead =
      make_dock(tr("Overhead"), QStringLiteral("overheadDock"), overhead_view_, this, false);
  overhead_dock_ = overhead;

  addDockWidget(Qt::LeftDockWidgetArea, parallel);
  addDockWidget(Qt::LeftDockWidgetArea, model);
  addDockWidget(Qt::LeftDockWidgetArea, data);
  tabifyDockWidget(parallel, model);
  tabifyDockWidget(model, data);
  parallel->raise();

  addDockWidget(Qt::BottomDockWidgetArea, memory);
  splitDockWidget(memory, training, Qt::Horizontal);
  splitDockWidget(training, stats, Qt::Horizontal);
  // Beside the loss, only while the run has experts to show.
  splitDockWidget(training, expert_load, Qt::Horizontal);
  expert_load_chart_->hide();  // docking showed it; the training view shows it for a step with experts
  expert_load->hide();
  connect(expert_load_chart_, &ExpertLoadChart::shownChanged, expert_load,
          [this, memory, training, expert_load, stats](bool shown) {
            expert_load->setVisible(shown);
            // Room for a bar per expert, taken from all three neighbours.
            if (shown)
              resizeDocks({memory, training, expert_load, stats}, {380, 380, 380, 480}, Qt::Horizontal);
          });
  // The default sizes hold only once the window has its own size: set now,
  // the window is still small, and the centre takes all it later grows by,
  // leaving the charts below a few pixels high. A restored layout wins.
  QTimer::singleShot(0, this, [this, parallel, memory, training, stats] {
    if (layout_restored_) return;
    resizeDocks({parallel}, {430}, Qt::Horizontal);
    resizeDocks({memory}, {kDefaultChartDockHeight}, Qt::Vertical);
    resizeDocks({memory, training, stats}, {520, 420, 480}, Qt::Horizontal);
  });
  tabifyDockWidget(stats, overhead);
  stats->raise();

  config_docks_ = {parallel, model, data};
  for (QDockWidget* dock : {parallel, model, data, memory, training, expert_load, stats, overhead})
    view_menu_->addAction(dock->toggleViewAction());
}

// --- settings -------------------------------------------------------------

void MainWindow::restoreSettings() {
  QSettings settings;
  recent_files_ = settings.value(kRecentFilesKey).toStringList();
  restoreGeometry(settings.value(kGeometryKey).toByteArray());
  layout_restored_ = restoreState(settings.value(kStateKey).toByteArray());
  rebuildRecentMenu();
}

void MainWindow::saveSettings() {
  QSettings settings;
  settings.setValue(kRecentFilesKey, recent_files_);
  settings.setValue(kGeometryKey, saveGeometry());
  settings.setValue(kStateKey, saveState());
}

void MainWindow::addRecentFile(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  recent_files_.removeAll(absolute);
  recent_files_.prepend(absolute);
  while (recent_files_.size() > kMaxRecentFiles) recent_files_.removeLast();
  QSettings().setValue(kRecentFilesKey, recent_files_);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recent_menu_->clear();
  for (int i = 0; i < recent_files_.size(); ++i) {
    const QString path = recent_files_[i];
    QAction* action =
        recent_menu_->addAction(tr("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()));
    action->setToolTip(path);
    connect(action, &QAction::triggered, this, [this, path] {
      if (maybeSave()) openFile(path);
    });
  }
  recent_menu_->setEnabled(!recent_files_.isEmpty());
  if (!recent_files_.isEmpty()) {
    recent_menu_->addSeparator();
    recent_menu_->addAction(tr("Clear the list"), this, [this] {
      recent_files_.clear();
      QSettings().setValue(kRecentFilesKey, recent_files_);
      rebuildRecentMenu();
    });
  }
}

// --- file commands ----------------------------------------------------------

void MainWindow::newExperiment() {
  if (!maybeSave()) return;
  resetRun();
  document_->replace(default_experiment(), QString(), false);
  setNotice({});
  showPresetNote({});
}

bool MainWindow::openFile(const QString& path) {
  if (starts_as_run_file(path.toStdString())) {
    // A saved run (the app's or `pipelab-cli train --save-run`'s, say from a
    // GPU server): listed with the others and shown in the comparison; the
    // experiment being edited stays as it is.
    if (!runs_menu_->openRun(path)) {
      statusBar()->showMessage(notice(), kStatusMessageMs);
      return false;
    }
    runs_menu_->showComparison();
    return true;
  }
  QString error;
  if (!document_->load(path, &error)) {
    // The experiment on screen stays as it was.
    setNotice(error);
    statusBar()->showMessage(error, kStatusMessageMs);
    if (!QFileInfo::exists(path)) {
      recent_files_.removeAll(QFileInfo(path).absoluteFilePath());
      rebuildRecentMenu();
    }
    return false;
  }
  resetRun();
  setNotice({});
  showPresetNote({});
  addRecentFile(path);
  statusBar()->showMessage(tr("Opened %1").arg(path), kStatusMessageMs);
  return true;
}

void MainWindow::openWithDialog() {
  if (!maybeSave()) return;
  const QString folder =
      document_->filePath().isEmpty() ? QString() : QFileInfo(document_->filePath()).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open an experiment"), folder,
                                                    tr("Experiments (*.json);;All files (*)"));
  if (!path.isEmpty()) openFile(path);
}

bool MainWindow::saveTo(const QString& path) {
  QString error;
  if (!document_->save(path, &error)) {
    setNotice(error);
    statusBar()->showMessage(error, kStatusMessageMs);
    return false;
  }
  setNotice({});
  addRecentFile(path);
  statusBar()->showMessage(tr("Saved %1").arg(path), kStatusMessageMs);
  return true;
}

bool MainWindow::save() {
  if (document_->filePath().isEmpty()) return saveAsWithDialog();
  return saveTo(document_->filePath());
}

bool MainWindow::saveAsWithDialog() {
  QString suggestion = document_->filePath();
  if (suggestion.isEmpty())
    suggestion =
        QString::fromStdString(document_->experiment().name).simplified().replace(' ', '-') +
        QStringLiteral(".json");
  QString path = QFileDialog::getSaveFileName(this, tr("Save the experiment"), suggestion,
                                              tr("Experiments (*.json)"));
  if (path.isEmpty()) return false;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".json");
  return saveTo(path);
}

bool MainWindow::maybeSave() {
  if (!document_->isDirty()) return true;
  switch (save_question_(document_->displayName())) {
    case QMessageBox::Save:
      return save();
    case QMessageBox::Discard:
      return true;
    default:
      return false;
  }
}

void MainWindow::showPresetNote(const QString& id) {
  shown_preset_id_ = id;
  const std::optional<Preset> preset = preset_by_id(id);
  run_series_->setSeries(preset ? preset->compare : std::nullopt);
  if (!preset) return preset_note_->showPreset({}, {});
  QString what_to_see = preset->what_to_see;
  if (const std::optional<RunSeries>& series = preset->compare) {
    QStringList names;
    for (const RunVariant& run : series->runs) names << tr("“%1”").arg(run.name);
    const QString last = names.takeLast();
    what_to_see = names.size() == 1 ? tr("%1 Run trains %2, then %3, and compares the two.")
                                          .arg(what_to_see, names.front(), last)
                                    : tr("%1 Run trains %2 and %3 in turn, and compares the %4.")
                                          .arg(what_to_see, names.join(tr(", ")), last)
                                          .arg(names.size() + 1);
  }
  preset_note_->showPreset(preset->title, what_to_see);
}

void MainWindow::showSeriesComparison(const QList<int>& rows) {
  updateRunActions();
  compare_view_->setRuns(rows);
  if (const std::optional<Preset> preset = preset_by_id(shown_preset_id_))
    compare_view_->setNote(preset->title, preset->what_to_see);
  runs_menu_->showComparison();
}

bool MainWindow::applyPreset(const QString& id) {
  const std::optional<Preset> preset = preset_by_id(id);
  if (!preset || !maybeSave()) return false;
  resetRun();
  document_->replace(preset->experiment, QString(), true);
  setNotice({});
  // What to see stays in the note above the timeline; the status bar just confirms.
  statusBar()->showMessage(tr("Preset: %1").arg(preset->title), kStatusMessageMs);
  showPresetNote(preset->id);
  if (preset->shows_overhead) overhead_dock_->raise();
  return true;
}

void MainWindow::planWithDialog() {
  PlanDialog dialog(document_->experiment(), this);
  if (dialog.exec() != QDialog::Accepted) return;
  if (const std::optional<PlanRequest> request = dialog.request()) planFor(*request);
}

void MainWindow::openSplitSearch() {
  if (split_search_) {
    split_search_->raise();
    split_search_->activateWindow();
    return;
  }
  auto* dialog = new SplitSearchDialog(document_->experiment(), this);
  split_search_ = dialog;
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &SplitSearchDialog::splitChosen, this,
          [this](const ParallelPlan& plan, const QString& summary) {
            if (run_->isActive() || planner_->isPlanning()) {
              setNotice(tr("Stop the run before loading a split"));
              return;
            }
            planner_->applySplit(plan, summary);
          });
  dialog->show();
}

void MainWindow::planFor(const PlanRequest& request) {
  if (run_->isActive()) return;  // the run holds the experiment as it is
  planner_->plan(request);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!maybeSave()) {
    event->ignore();
    return;
  }
  run_->reset();  // stops the workers before the window goes
  saveSettings();
  event->accept();
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
  // A click on the notice bar dismisses it.
  if (watched == notice_label_ && event->type() == QEvent::MouseButtonRelease) setNotice({});
  return QMainWindow::eventFilter(watched, event);
}

// --- run commands -----------------------------------------------------------

bool MainWindow::startRun(bool paused) {
  if (planner_->isPlanning()) {
    // The plan replaces the split when it lands, which would end this run.
    statusBar()->showMessage(tr("Wait for Plan for me to finish: its plan changes the split"),
                             kStatusMessageMs);
    return false;
  }
  // A pending edit would otherwise be judged by its predecessor's problems.
  predictor_->updateNow();
  if (!predictor_->problems().isEmpty()) {
    const QString text = tr("Fix the problems shown in the panels before running (%1)")
                             .arg(core_message_text(predictor_->problems().first()));
    statusBar()->showMessage(text, kStatusMessageMs);
    return false;
  }
  if (document_->experiment().backend.type == "cuda" && !gpus_.usable()) {
    // A problem of the settings, listed in the parallel panel: no run failed.
    const QString text = tr("Cannot run: %1").arg(cudaUnusableProblem());
    training_view_->setRunError(text);
    statusBar()->showMessage(text, kStatusMessageMs);
    distributeProblems();
    return false;
  }
  run_problem_.clear();
  training_view_->setRunError({});
  distributeProblems();
  run_->setPlaybackSpeed(speed_combo_->currentData().toDouble());
  // A preset of several runs trains them all on Run; a step walks through one run.
  if (run_series_->series() && !paused) {
    QString error;
    if (!run_series_->start(document_->experiment(), &error)) {
      onRunFailed(error, ProblemArea::Run);
      return false;
    }
    return true;
  }
  run_->start(document_->experiment(), 0, paused);
  return true;
}

void MainWindow::attachTo(const QString& address) {
  run_series_->cancel();
  run_problem_.clear();
  training_view_->setRunError({});
  distributeProblems();
  run_->setPlaybackSpeed(speed_combo_->currentData().toDouble());
  run_->attach(address);
}

void MainWindow::runOrPause() {
  switch (run_->phase()) {
    case RunController::Phase::Running:
      run_->pause();
      break;
    case RunController::Phase::Paused:
      run_->resume();
      break;
    case RunController::Phase::Preparing:
      break;
    default:
      startRun(false);
      break;
  }
}

void MainWindow::stepOnce() {
  switch (run_->phase()) {
    case RunController::Phase::Paused:
    case RunController::Phase::Preparing:
      run_->step();
      break;
    case RunController::Phase::Running:
      run_->pause();
      break;
    default:
      if (startRun(true)) run_->step();
      break;
  }
}

void MainWindow::stopRun() {
  run_series_->cancel();  // Stop stops a pair of runs, not just the one training
  run_->stop();
}

void MainWindow::resetRun() {
  run_series_->cancel();
  run_->reset();
  run_problem_.clear();
  training_view_->setRunError({});
  distributeProblems();
}

void MainWindow::onRunPhaseChanged(RunController::Phase) {
  const bool active = run_->isActive();
  // The run uses a copy of the experiment; editing it meanwhile would make
  // the predicted and measured timelines disagree about what ran.
  for (QDockWidget* dock : config_docks_) dock->widget()->setEnabled(!active);
  new_action_->setEnabled(!active);
  open_action_->setEnabled(!active);
  updateRunActions();
}

void MainWindow::onRunFailed(const QString& reason, ProblemArea area) {
  run_problem_ = reason;
  run_problem_area_ = area;
  training_view_->setRunError(runStoppedText());
  statusBar()->showMessage(tr("Run failed: %1").arg(core_message_text(reason)), kStatusMessageMs);
  distributeProblems();
  updateRunActions();
}

QString MainWindow::runStoppedText() const {
  return tr("The run stopped: %1").arg(core_message_text(run_problem_));
}

void MainWindow::updateRunActions() {
  const RunController::Phase phase = run_->phase();
  const bool running = phase == RunController::Phase::Running;
  run_action_->setText(running ? tr("&Pause") : tr("&Run"));
  run_action_->setIcon(
      style()->standardIcon(running ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
  stop_action_->setEnabled(run_->isActive());
  reset_action_->setEnabled(phase != RunController::Phase::Idle);
  plan_action_->setEnabled(!run_->isActive() && !planner_->isPlanning());
  // Run (and Step) start nothing while a plan is on its way: it changes the split.
  const bool can_start = run_->isActive() || !planner_->isPlanning();
  run_action_->setEnabled(can_start);
  step_action_->setEnabled(can_start);
  undo_plan_action_->setEnabled(!run_->isActive() && planner_->canUndo());
  QString status = tr("Run: %1").arg(RunController::phaseName(phase));
  if (phase != RunController::Phase::Idle && phase != RunController::Phase::Preparing)
    status += tr(" · step %1 of %2").arg(run_->stepsDone()).arg(run_->stepsTotal());
  if (run_series_->runningPart() > 0)
    status += tr(" · run %1 of %2").arg(run_series_->runningPart()).arg(run_series_->runCount());
  run_status_label_->setText(status);
}

// --- predictions and problems -----------------------------------------------

void MainWindow::onPredictionUpdated() {
  const auto prediction = predictor_->prediction();
  timeline_view_->setPrediction(prediction, predictor_->problems().join('\n'));
  memory_view_->setPrediction(prediction);
  stats_panel_->setPrediction(prediction, document_->experiment());
  overhead_view_->setPrediction(prediction, document_->experiment());
  // Of the idle time, what the devices spend in collectives (the Overhead tab's share).
  double collectives = 0;
  const std::vector<OverheadShares>& shares = overhead_view_->predictedShares();
  for (const OverheadShares& share : shares) collectives += share.collectives / double(shares.size());
  parallel_panel_->setPredictedBubble(
      prediction ? prediction->result.bubble_fraction : std::nan(""), collectives);
  distributeProblems();
}

QString MainWindow::cudaUnusableProblem() const {
  return tr("backend.type = cuda: %1 Choose CPU threads under Backend in the Parallelism panel.")
      .arg(gpus_.reason_unusable());
}

QStringList MainWindow::settingsProblems() const {
  QStringList all = predictor_->problems();
  if (document_->experiment().backend.type == "cuda" && !gpus_.usable())
    all << cudaUnusableProblem();
  return all;
}

void MainWindow::distributeProblems() {
  const QStringList all = settingsProblems();
  QStringList model = problems_in(all, ProblemArea::Model);
  QStringList parallel = problems_in(all, ProblemArea::Parallel);
  QStringList data = problems_in(all, ProblemArea::Data);
  // Anything unrouted sits with the parallel settings, which decide what runs.
  parallel << problems_in(all, ProblemArea::Run);
  if (!run_problem_.isEmpty()) {
    const QString text = tr("The last run failed: %1").arg(core_message_text(run_problem_));
    switch (run_problem_area_) {
      case ProblemArea::Model:
        model << text;
        break;
      case ProblemArea::Data:
        data << text;
        break;
      case ProblemArea::Parallel:
        parallel << text;
        break;
      case ProblemArea::Run:
        break;  // the training view says it
    }
  }
  model_panel_->setProblems(model);
  parallel_panel_->setProblems(parallel);
  data_panel_->setProblems(data);
  // Panels hidden behind a dock tab still show that they need attention.
  const std::pair<QDockWidget*, bool> docks[] = {{config_docks_.value(0), !parallel.isEmpty()},
                                                 {config_docks_.value(1), !model.isEmpty()},
                                                 {config_docks_.value(2), !data.isEmpty()}};
  const QString titles[] = {tr("Parallelism"), tr("Model"), tr("Data and training")};
  for (int i = 0; i < 3; ++i) {
    if (!docks[i].first) continue;
    docks[i].first->setWindowTitle(docks[i].second ? titles[i] + QStringLiteral(" ⚠") : titles[i]);
  }
}

QStringList MainWindow::shownProblems() const {
  QStringList all = settingsProblems();
  if (!run_problem_.isEmpty()) all << run_problem_;
  return all;
}

void MainWindow::updateTitle() {
  setWindowTitle(
      tr("%1[*] — %2 — PipeLab")
          .arg(document_->displayName(), QString::fromStdString(document_->experiment().name)));
  setWindowModified(document_->isDirty());
}

void MainWindow::setNotice(const QString& text) {
  notice_label_->setProblems(text.isEmpty() ? QStringList{} : QStringList{text});
}

QString MainWindow::notice() const {
  return notice_label_->problems().isEmpty() ? QString() : notice_label_->problems().first();
}

QString MainWindow::presetNote() const { return preset_note_->text(); }

}  // namespace pipelab
