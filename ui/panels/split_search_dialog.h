// SplitSearchDialog: the planner view. Searches every split of the open
// experiment over a cluster (core/planner/split_search.h, on a background
// thread) and draws each candidate as a point, memory per device against
// throughput: simulated points solid, estimated ones pale, the memory a plan
// may use as a line with the region past it shaded, the Pareto front joined.
// Filters keep a dimension to one value; a table lists the search's best
// plans (step, MFU, bubble, peak memory); clicking a point or a row shows its
// split, its memory by category, its rank or why the search set it aside, and
// "Load into experiment" hands it to the window (splitChosen), which applies it
// with one undo as Plan for me does; "Export launch" shows it as Megatron-LM
// flags or a torchtitan job section (core/planner/launch_export.h) and copies
// that to the clipboard.
#pragma once

#include <QDialog>
#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "core/io/experiment.h"
#include "core/planner/launch_export.h"
#include "ui/models/background_job.h"
#include "ui/models/split_search_model.h"

class QCPItemRect;
class QCPItemStraightLine;
class QComboBox;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace pipelab {

class SplitSearchDialog : public QDialog {
  Q_OBJECT

 public:
  // Starts from the experiment's cluster (or its device count) and its device's memory.
  explicit SplitSearchDialog(const Experiment& experiment, QWidget* parent = nullptr);

  // Why the search set `pruned` aside, in the app's language, from the same
  // facts as the CLI's English (core's prune_why_text).
  static QString whyText(const PrunedPlan& pruned);
  // Stops a search still running, so closing never waits for it.
  ~SplitSearchDialog() override;

  // Starts a search with what the form says; searchFinished() follows. While
  // one runs, the Search button stops it (stop()).
  void search();
  void stop();
  bool isSearching() const { return job_.isRunning(); }
  // Shows `candidate` (an index into the model's candidates) as the chosen point.
  void selectCandidate(int candidate);
  std::optional<int> selectedCandidate() const { return selected_; }

  const SplitSearchModel& model() const { return model_; }
  QSpinBox* devicesSpin() const { return devices_spin_; }
  QLineEdit* memoryEdit() const { return memory_edit_; }
  QComboBox* filterCombo(SplitSearchModel::Dimension dimension) const {
    return filters_[dimension];
  }
  QPushButton* searchButton() const { return search_button_; }
  QPushButton* loadButton() const { return load_button_; }
  QPushButton* exportButton() const { return export_button_; }
  // The chosen candidate as `tool` launches it, with what has no equivalent
  // listed; or why it cannot be exported (a model that is not a GPT). Empty
  // without a chosen candidate.
  QString launchText(LaunchTool tool, bool* exported = nullptr) const;
  // Shows launchText(tool) in a window and copies it to the clipboard.
  void exportLaunch(LaunchTool tool);
  QCustomPlot* plot() const { return plot_; }
  QLabel* statusLabel() const { return status_label_; }
  QLabel* detailsLabel() const { return details_label_; }
  // The best plans, fastest first; selecting a row selects its candidate.
  QTableWidget* bestTable() const { return best_table_; }

 signals:
  void searchFinished(bool found);
  // The split to load, and one line saying what it is and what it predicts.
  void splitChosen(const ParallelPlan& plan, const QString& summary);

 private:
  using Outcome = std::variant<SearchResult, std::string>;
  void onSearched();
  void refreshFilters();
  void redraw();
  void showDetails();
  void fillBestTable();
  void pickAt(const QPointF& pixel);

  Experiment experiment_;
  int devices_per_node_ = 8;  // the cluster's node, where the experiment names one
  SplitSearchModel model_;
  std::optional<int> selected_;
  // Read by the search's thread at each progress report: set, it stops there.
  std::shared_ptr<std::atomic<bool>> stop_requested_ = std::make_shared<std::atomic<bool>>(false);
  QSpinBox* devices_spin_;
  QLineEdit* memory_edit_;
  QSpinBox* margin_spin_;
  QPushButton* search_button_;
  QLabel* status_label_;
  std::array<QComboBox*, SplitSearchModel::kDimensionCount> filters_{};
  QCustomPlot* plot_;
  QCPItemStraightLine* usable_line_ = nullptr;
  QCPItemRect* over_memory_ = nullptr;
  QLabel* details_label_;
  QTableWidget* best_table_;
  QPushButton* load_button_;
  QPushButton* export_button_;
  BackgroundJob<Outcome> job_{this, [this] { onSearched(); }};
};

}  // namespace pipelab
