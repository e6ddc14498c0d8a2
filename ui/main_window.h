// MainWindow: PipeLab's window. The timeline sits in the middle; the model,
// parallelism and data panels dock on the left; memory, training and
// statistics dock at the bottom. Menus and a toolbar hold the file, run,
// preset, export and view commands. Window layout and recent files persist
// (QSettings); unsaved changes show in the title and are confirmed on close.
#pragma once

#include <QMainWindow>
#include <QPointer>
#include <QMessageBox>
#include <QStringList>
#include <functional>

#include "ui/gpu_availability.h"
#include "ui/models/problem_routing.h"
#include "ui/models/run_controller.h"

class QAction;
class QComboBox;
class QDockWidget;
class QLabel;
class QMenu;

namespace pipelab {

class CompareView;
class DataPanel;
class ExperimentDocument;
class ExportActions;
class MemoryView;
class ModelPanel;
class ParallelPanel;
class PlanController;
struct PlanRequest;
class PredictionUpdater;
class ProblemLabel;
class ReplayUpdater;
class RunSeriesController;
class RunStore;
class RunsMenu;
class SplitSearchDialog;
class StatsPanel;
class OverheadView;
class PresetNote;
class TimelineView;
class TrainingView;
class ExpertLoadChart;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(const GpuAvailability& gpus = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  // File commands without dialogs (the menu's dialogs end up here). They
  // report failures in the window (notice bar and status bar) and return false.
  bool openFile(const QString& path);
  bool saveTo(const QString& path);
  void newExperiment();
  bool applyPreset(const QString& id);
  // View > Language: switches the app to `code` (language.h) at once and
  // remembers it; the window rebuilds its menus and panels in the new language.
  void setLanguage(const QString& code);
  // Plan for me without the dialog: plans the open experiment for `request`
  // in the background and applies the plan (Plan > Undo plan puts the
  // previous split back); a plan that cannot be made is shown as a notice.
  void planFor(const PlanRequest& request);

  // Run commands, as the toolbar and shortcuts trigger them.
  void runOrPause();
  void stepOnce();
  void stopRun();
  void resetRun();
  // Starts a run; false (with the reason shown) when the experiment has problems.
  bool startRun(bool paused = false);
  // Follows a run that trains elsewhere (RunController::attach); the panels
  // show its experiment once connected.
  void attachTo(const QString& address);

  // The notice under the toolbar (a failed open or save, an export error).
  QString notice() const;
  // Every problem currently shown in the panels, in order.
  QStringList shownProblems() const;

  ExperimentDocument* document() const { return document_; }
  PredictionUpdater* predictor() const { return predictor_; }
  RunController* runController() const { return run_; }
  // Run on a preset of several runs (Preset::compare) trains them all through it.
  RunSeriesController* runSeries() const { return run_series_; }
  ReplayUpdater* replayUpdater() const { return replay_updater_; }
  PlanController* planController() const { return planner_; }
  ModelPanel* modelPanel() const { return model_panel_; }
  ParallelPanel* parallelPanel() const { return parallel_panel_; }
  DataPanel* dataPanel() const { return data_panel_; }
  TimelineView* timelineView() const { return timeline_view_; }
  MemoryView* memoryView() const { return memory_view_; }
  TrainingView* trainingView() const { return training_view_; }
  StatsPanel* statsPanel() const { return stats_panel_; }
  OverheadView* overheadView() const { return overhead_view_; }
  // The open preset's "what to see", above the timeline (empty: none open).
  QString presetNote() const;
  // File > Export, also callable without dialogs.
  ExportActions* exports() const { return exports_; }
  // The runs made since start (and reopened ones), their comparison window
  // and the Runs menu's commands (also callable without dialogs).
  RunStore* runStore() const { return run_store_; }
  CompareView* compareView() const { return compare_view_; }
  RunsMenu* runsMenu() const { return runs_menu_; }
  QComboBox* speedCombo() const { return speed_combo_; }
  QStringList recentFiles() const { return recent_files_; }

  // How "save your changes?" is answered. The default asks with a message
  // box; tests and scripted runs replace it.
  using SaveQuestion = std::function<QMessageBox::StandardButton(const QString& name)>;
  void setSaveQuestion(SaveQuestion question) { save_question_ = std::move(question); }

 protected:
  void closeEvent(QCloseEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  void buildViews();
  void rebuildViews();
  // The note above the timeline for the preset `id` (translated now); empty
  // hides it. The preset's series of runs, if it has one, is what Run trains.
  void showPresetNote(const QString& id);
  // A preset's runs all finished: the comparison window shows them.
  void showSeriesComparison(const QList<int>& rows);
  void buildActions();
  void buildMenus();
  void buildToolbar();
  void buildDocks();
  void restoreSettings();
  void saveSettings();

  void openWithDialog();
  void planWithDialog();
  // Plan > Search every split: the planner view, one window at a time.
  void openSplitSearch();
  bool save();
  bool saveAsWithDialog();
  // Asks whether to save unsaved changes; false when the user cancels.
  bool maybeSave();
  void addRecentFile(const QString& path);
  void rebuildRecentMenu();

  void onPredictionUpdated();
  void onRunPhaseChanged(RunController::Phase phase);
  void onRunFailed(const QString& reason, ProblemArea area);
  void distributeProblems();
  // Why the experiment's backend (cuda) cannot run here, and the fix.
  QString cudaUnusableProblem() const;
  // The experiment's problems: the predictor's, and the backend's.
  QStringList settingsProblems() const;
  void updateTitle();
  void updateRunActions();
  void setNotice(const QString& text);
  QString runStoppedText() const;

  GpuAvailability gpus_;
  ExperimentDocument* document_;
  PredictionUpdater* predictor_;
  RunController* run_;
  RunSeriesController* run_series_;
  ReplayUpdater* replay_updater_;
  PlanController* planner_;
  ModelPanel* model_panel_;
  ParallelPanel* parallel_panel_;
  DataPanel* data_panel_;
  TimelineView* timeline_view_;
  MemoryView* memory_view_;
  TrainingView* training_view_;
  ExpertLoadChart* expert_load_chart_;  // in its own dock, fed by training_view_
  StatsPanel* stats_panel_;
  OverheadView* overhead_view_;
  QDockWidget* overhead_dock_ = nullptr;
  bool layout_restored_ = false;  // the saved dock layout came back (restoreSettings)
  PresetNote* preset_note_;
  QString shown_preset_id_;  // the preset the note describes; none when empty
  ExportActions* exports_;
  RunStore* run_store_;
  CompareView* compare_view_;
  RunsMenu* runs_menu_;
  ProblemLabel* notice_label_;
  QLabel* run_status_label_;
  QComboBox* speed_combo_;
  QList<QDockWidget*> config_docks_;
  QObject* view_objects_ = nullptr;  // parent of the actions buildViews() makes
  bool rebuild_pending_ = false;

  QAction* new_action_;
  QAction* open_action_;
  QAction* save_action_;
  QAction* save_as_action_;
  QAction* quit_action_;
  QAction* run_action_;
  QAction* step_action_;
  QAction* stop_action_;
  QAction* reset_action_;
  QAction* plan_action_;
  QAction* undo_plan_action_;
  QAction* split_search_action_;
  QPointer<SplitSearchDialog> split_search_;  // the open planner view, if any
  QMenu* recent_menu_ = nullptr;
  QMenu* view_menu_ = nullptr;

  QStringList recent_files_;
  QString run_problem_;
  ProblemArea run_problem_area_ = ProblemArea::Run;
  SaveQuestion save_question_;
};

}  // namespace pipelab
