// ExportActions: the window's File > Export commands. Each chart (timeline,
// memory, training, overhead, the comparison of two runs) goes to PNG, SVG or
// PDF, one step of the timeline unfolding to an animated GIF, and the trace to
// Chrome JSON or CSV, through a save dialog that remembers the last folder, or
// straight to a path for scripts and tests. What was written, or why not, comes
// out as signals so the window decides where to show it.
#pragma once

#include <QObject>
#include <QSize>
#include <QString>
#include <functional>

class QAction;
class QMenu;
class QWidget;

namespace pipelab {

class CompareView;
class MemoryView;
class OverheadView;
class PredictionUpdater;
class RunController;
class TimelineView;
class TrainingView;

class ExportActions : public QObject {
  Q_OBJECT

 public:
  // What there is to export. The views and controllers outlive this object.
  struct Sources {
    TimelineView* timeline = nullptr;
    MemoryView* memory = nullptr;
    TrainingView* training = nullptr;
    RunController* run = nullptr;
    PredictionUpdater* predictor = nullptr;
    CompareView* compare = nullptr;
    OverheadView* overhead = nullptr;
  };

  // `window` parents the save dialogs and owns this object.
  ExportActions(const Sources& sources, QWidget* window);

  // The charts, a separator, then the traces.
  void addTo(QMenu* menu) const;
  // File > Export > Comparison of two runs…, also offered in the comparison window.
  QAction* comparisonAction() const { return comparison_action_; }

  // Exports without dialogs; `size` as in export_charts. False with *error on failure.
  bool exportTimeline(const QString& path, QString* error, QSize size = QSize()) const;
  bool exportMemoryChart(const QString& path, QString* error, QSize size = QSize()) const;
  bool exportTrainingChart(const QString& path, QString* error, QSize size = QSize()) const;
  // The comparison of two runs: loss and memory, both timelines, the statistics under them.
  bool exportComparison(const QString& path, QString* error, QSize size = QSize()) const;
  bool exportOverheadChart(const QString& path, QString* error, QSize size = QSize()) const;
  // One step of the timeline unfolding, as an animated GIF (see trace_to_animate).
  bool exportTimelineGif(const QString& path, QString* error) const;
  // The measured trace when there is one, the predicted one otherwise.
  bool exportChromeTrace(const QString& path, QString* error) const;
  // Writes <prefix>_events.csv, <prefix>_memory.csv and <prefix>_steps.csv.
  bool exportCsv(const QString& prefix, QString* error) const;

 signals:
  // "Wrote …", for the status bar.
  void wrote(const QString& message);
  // One line saying what could not be written and why.
  void failed(const QString& error);

 private:
  using ChartWriter = std::function<bool(const QString& path, QString* error)>;
  void exportChartWithDialog(const QString& what, const ChartWriter& write);
  void exportTraceWithDialog(bool chrome);
  void exportGifWithDialog();

  Sources sources_;
  QWidget* window_;
  QAction* timeline_action_;
  QAction* memory_action_;
  QAction* training_action_;
  QAction* comparison_action_;
  QAction* overhead_action_;
  QAction* gif_action_;
  QAction* chrome_action_;
  QAction* csv_action_;
};

}  // namespace pipelab
