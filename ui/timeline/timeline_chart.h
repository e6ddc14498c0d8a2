// TimelineChart: one trace's timeline as a plot: a row per device labelled
// with its device, stage(s) and replica, the ops as coloured bars, bubbles
// shaded, a title and a legend. Asynchronous schedules' bars carry their
// weight versions (see TimelinePlottable). Drag pans and the wheel zooms in time; a
// double-click fits everything; hovering an op shows its details.
#pragma once

#include <qcustomplot.h>

#include <QString>
#include <QStringList>
#include <limits>
#include <set>
#include <vector>

#include "core/trace/trace_events.h"
#include "ui/timeline/time_axis_unit.h"

namespace pipelab {

class TimelinePlottable;

// Measured gaps shorter than this are thread hand-over jitter, not bubbles.
inline constexpr double kMeasuredBubbleMinSeconds = 5e-6;

class TimelineChart : public QCustomPlot {
  Q_OBJECT

 public:
  explicit TimelineChart(QWidget* parent = nullptr);

  TimelinePlottable* bars() const { return bars_; }

  void setTitle(const QString& title);
  QString title() const;  // whole, however much of it fits
  QSize minimumSizeHint() const override;

  // Replaces the rows, bars and bubbles with those of `trace`. Gaps shorter
  // than bubble_min_duration (trace time) are not shaded.
  void showTrace(const Trace& trace, double bubble_min_duration = 0);
  // Appends ops recorded since the last call (a live run).
  void appendEvents(const std::vector<TraceEvent>& events);
  // Recomputes the shaded bubbles from the whole trace.
  void updateBubbles(const Trace& trace, double bubble_min_duration = 0);
  void setRowLabels(const QStringList& labels);
  int rowCount() const { return row_count_; }

  // The playback clock, in trace time (see TimelinePlottable::setNow).
  void setNow(double trace_time);

  // Draws time in `unit` rather than the one showTrace picked (two charts on
  // one time scale).
  void setTimeUnit(const TimeAxisUnit& unit);

  // Shades [0, end] (trace time) and labels it "warm-up": the first step,
  // which the statistics leave out. NaN removes the mark.
  void setWarmupEnd(double trace_time);
  double warmupEnd() const { return warmup_end_; }

  // Fits the time axis to everything shown.
  void fitAll();
  // Shows [begin, end] of trace time.
  void showTimeRange(double begin, double end);

  void setLegendShown(bool shown);

 signals:
  // The user dragged the time axis (follow-live mode stops following).
  void userPanned();
  // The user zoomed with the wheel.
  void userZoomed();

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void applyRowLabels();
  void applyTitle();
  void showTooltip(QMouseEvent* event);
  void rebuildLegend();
  void placeWarmup();

  TimelinePlottable* bars_;
  QCPItemRect* warmup_shade_;
  QCPItemText* warmup_label_;
  double warmup_end_ = std::numeric_limits<double>::quiet_NaN();
  QCPTextElement* title_;
  QString full_title_;
  static constexpr int kMinimumWidth = 300;
  QCPLayoutGrid* legend_row_;  // owned by the plot layout while shown, by this chart otherwise
  QSharedPointer<QCPAxisTickerText> row_ticker_;
  int row_count_ = 0;
  QStringList row_labels_;
  static constexpr int height_hint_ = 200;  // before the first layout: a typical chart's height
  bool unit_time_ = false;
  std::set<OpColorRole> legend_roles_;  // the legend entries the shown ops need
  bool legend_shown_ = true;
};

// What the tooltip says about an op: kind, micro-batch, stage, device, step,
// weight version, start, end and duration.
QString describe_trace_event(const TraceEvent& event, bool unit_time);

}  // namespace pipelab
