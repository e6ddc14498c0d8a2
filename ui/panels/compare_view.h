// CompareView: two runs side by side. Their loss curves overlaid and one
// device's memory over time overlaid (one chart, two panes, a legend naming
// the runs), their statistics in two columns (warm-up left out, as
// core/trace/run_statistics.h computes them), and their measured timelines
// one above the other on one time scale: panning or zooming one moves both.
// The runs come from the RunStore; File > Export > Comparison draws it all.
#pragma once

#include <QList>
#include <QWidget>
#include <memory>

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
  // Compares the runs at these rows of the store (-1: none).
  void setRuns(int row_a, int row_b);
  int runA() const;
  int runB() const;
  // A note above the charts saying what the two runs show (a preset's), until
  // other runs are chosen; an empty title hides it.
  void setNote(const QString& title, const QString& text);
  QString note() const;
  // Whose memory the memory pane draws, and over what: the first step the
  // statistics count, each run from that step's start (the default), or the whole run.
  void setMemoryDevice(int device);
  void setMemoryOverWholeRun(bool whole_run);

  // What tests and exports read.
  QCustomPlot* curvesPlot() const { return curves_; }
  QCPGraph* lossGraph(int run) const { return loss_[run]; }
  QCPGraph* memoryGraph(int run) const { return memory_[run]; }
  TimelineChart* timeline(int run) const { return run == 0 ? timeline_a_ : timeline_b_; }
  QTableWidget* statisticsTable() const { return table_; }
  // The statistics as aligned text lines (exports print them under the charts).
  QString statisticsText() const;
  // The charts an export draws, top to bottom.
  QList<QCustomPlot*> charts() const;

 signals:
  // "Save…" and "Open…" in the view's bar; the window does the file dialogs.
  void saveRequested(int row);
  void openRequested();

 private:
  void rebuild();
  void rebuildCurves();
  void rebuildStatistics();
  void rebuildTimelines();
  void onRunsInserted();
  // The time unit of the run that lasts longer: both runs are drawn in it.
  TimeAxisUnit sharedTimeUnit() const;

  RunStore* store_ = nullptr;
  std::shared_ptr<const RunRecord> runs_[2];
  QComboBox* run_combo_[2];
  QComboBox* device_combo_;
  QCheckBox* whole_run_check_;
  QHBoxLayout* bar_;
  QCustomPlot* curves_;
  QCPAxisRect* loss_rect_;
  QCPAxisRect* memory_rect_;
  QCPGraph* loss_[2];
  QCPGraph* memory_[2];
  QTableWidget* table_;
  QLabel* empty_label_;
  PresetNote* note_;
  TimelineChart* timeline_a_;
  TimelineChart* timeline_b_;
  int memory_device_ = 0;
};

}  // namespace pipelab
