// MemoryView: memory over time. Top: every device's total, one curve each.
// Bottom: the selected device's memory stacked by category (weights,
// gradients, optimizer state, activations, ...) with its peak marked, and
// what offloading parks in host memory as a dashed line beside the stack. Shows
// the measured run while there is one (cut at the playback clock, so it grows
// live), the prediction otherwise.
#pragma once

#include <QWidget>
#include <memory>

#include "core/sim/experiment_prediction.h"
#include "core/trace/trace_events.h"
#include "ui/models/refresh_throttle.h"

class QComboBox;
class QLabel;
class QCustomPlot;
class QCPAxisRect;
class QCPLegend;
class QCPItemTracer;
class QCPItemText;

namespace pipelab {

class RunController;

// A memory category's name as the legend shows it, translated ("optimizer state").
QString memory_category_title(MemoryCategory category);

class MemoryView : public QWidget {
  Q_OBJECT

 public:
  explicit MemoryView(QWidget* parent = nullptr);

  void setRunController(RunController* run);
  void setPrediction(std::shared_ptr<const Prediction> prediction);

  QCustomPlot* plot() const { return plot_; }
  void setSelectedDevice(int device);
  int selectedDevice() const { return selected_device_; }
  // True while the charts show the measured run.
  bool showsMeasured() const { return shows_measured_; }
  // Points plotted in the totals chart (for tests and the empty state).
  int plottedPointCount() const;
  // Peak of the selected device's total up to the playback clock, in bytes.
  int64_t shownPeakBytes() const { return shown_peak_bytes_; }

 public slots:
  // Redraws from the current data now (normally coalesced per event-loop turn).
  void rebuild();

 private:
  void scheduleRebuild();
  const Trace* currentTrace() const;

  RunController* run_ = nullptr;
  std::shared_ptr<const Prediction> prediction_;
  QCustomPlot* plot_;
  QCPAxisRect* totals_rect_;
  QCPAxisRect* stacked_rect_;
  QCPLegend* stacked_legend_;
  QCPItemTracer* peak_tracer_;
  QCPItemText* peak_label_;
  QComboBox* device_combo_;
  QLabel* source_label_;
  int selected_device_ = 0;
  bool shows_measured_ = false;
  static constexpr int kMaxRefreshHz = 12;
  // Room for one tick label: a time ("1500") across, a size ("2.5") up.
  static constexpr int kPixelsPerTimeTick = 60;
  static constexpr int kPixelsPerByteTick = 20;
  bool rebuild_pending_ = false;
  RefreshThrottle throttle_{1000 / kMaxRefreshHz};
  int64_t shown_peak_bytes_ = 0;
};

}  // namespace pipelab
