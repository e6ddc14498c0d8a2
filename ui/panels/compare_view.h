// CompareView: two to four runs side by side. Their loss curves overlaid and
// one device's memory over time overlaid (one chart, two panes, a legend
// naming the runs), their statistics in one column each (warm-up left out, as
// core/trace/run_statistics.h computes them), and their measured timelines
// one above another on one time scale: panning or zooming one moves them all.
// Runs A and B are always there; "Add run" brings C and D. The runs come from
// the RunStore; File > Export > Comparison draws it all.
#pragma once

#include <QList>
#include <QWidget>
#include <memory>
#include <optional>

#include "core/io/run_file.h"
#include "ui/timeline/time_axis_unit.h"

class QAction;
class QCheckBox;
class QHBoxLayout;
class QComboBox;
class QCustomPlot;
class QCPAxisRect;
class QCPGraph;
class QLabel;
class QPushButton;
class QSplitter;
class QTableWidget;

namespace pipelab {

class PresetNote;
class RunStore;
class TimelineChart;

class CompareView : public QWidget {
  Q_OBJECT

 public:
  explicit CompareView(QWidget* parent = nullptr);

  void setRunStore(RunStore* store);
  // Puts the window's "export the comparison" command in the view's bar.
  void setExportAction(QAction* action);
  // Compares the runs at these rows of the store (-1: none), in slots A, B,
  // ... (at most kMaxComparedRuns); slots past the list are closed.
  void setRuns(const QList<int>& rows);
  void setRuns(int row_a, int row_b) { setRuns(QList<int>{row_a, row_b}); }
  // The row each open slot shows (-1 for none), and one slot's.
  QList<int> runs() const;
  int run(int slot) const;
  int runA() const { return run(0); }
  int runB() const { return run(1); }
  // Opens the next slot on the newest run (the "Add run" button); false when
  // every slot is open.
  bool addRun();
  // A note above the charts saying what the two runs show (a preset's), until
  // other runs are chosen; an empty title hides it.
  void setNote(const QString& title, const QString& text);
  QString note() const;
  // Whose memory the memory pane draws, and over what: the first step the
  // statistics count, each run from that step's start (the default), or the whole run.
  void setMemoryDevice(int device);
  void setMemoryOverWholeRun(bool whole_run);
  // What the memory pane draws: the device's total (none, the default), or
  // one category of it (say the optimizer state, which ZeRO-1 shares out).
  void setMemoryCategory(std::optional<MemoryCategory> category);

  // What tests and exports read, per slot (0 is A).
  QCustomPlot* curvesPlot() const { return curves_; }
  QCPGraph* lossGraph(int slot) const { return slots_[slot].loss; }
  QCPGraph* memoryGraph(int slot) const { return slots_[slot].memory; }
  TimelineChart* timeline(int slot) const { return slots_[slot].timeline; }
  QTableWidget* statisticsTable() const { return table_; }
  // The statistics as aligned text lines (exports print them under the charts).
  QString statisticsText() const;
  // The charts an export draws, top to bottom (the open slots' timelines).
  QList<QCustomPlot*> charts() const;

 signals:
  // "Save…" and "Open…" in the view's bar; the window does the file dialogs.
  void saveRequested(int row);
  void openRequested();

 private:
  // One compared run: its chooser and the graphs and timeline that draw it.
  struct Slot {
    std::shared_ptr<const RunRecord> record;
    bool open = false;           // A and B always are; C and D once added
    QWidget* chooser = nullptr;  // the bar's label, combo and buttons
    QComboBox* combo = nullptr;
    QCPGraph* loss = nullptr;
    QCPGraph* memory = nullptr;
    TimelineChart* timeline = nullptr;
  };

  void rebuild();
  void rebuildCurves();
  void rebuildStatistics();
  void rebuildTimelines();
  void onRunsInserted();
  void closeSlot(int slot);
  QList<int> openSlots() const;
  // The time unit of the run that lasts longest: every run is drawn in it.
  TimeAxisUnit sharedTimeUnit() const;

  RunStore* store_ = nullptr;
  Slot slots_[4];  // kMaxComparedRuns
  QPushButton* add_button_;
  QComboBox* device_combo_;
  QComboBox* category_combo_;  // item 0: total; item c + 1: category c
  QCheckBox* whole_run_check_;
  QHBoxLayout* bar_;
  QCustomPlot* curves_;
  QCPAxisRect* loss_rect_;
  QCPAxisRect* memory_rect_;
  QTableWidget* table_;
  QSplitter* top_;  // the curves beside the statistics
  QLabel* empty_label_;
  PresetNote* note_;
  int memory_device_ = 0;
};

}  // namespace pipelab
