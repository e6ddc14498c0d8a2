// TimelinePlottable: one QCustomPlot plottable that draws a whole trace's ops
// as bars, one row per device, from a single vector sorted by start time.
// Each repaint draws only the bars inside the visible time range, and at most
// about one bar per pixel column and row, so a trace with tens of thousands of
// ops pans and zooms smoothly (one QCPItemRect per bar would not).
//
// Compute ops (F, B, BI, BW, U, recompute) fill the upper lane of a row,
// labelled with their micro-batch; with weight versions shown (asynchronous
// schedules) each op that reads or writes weights also carries its version as
// "v2" in the label and as a colour strip along its bottom edge. Communication
// ops fill a thin lower lane, so overlap of the two stays visible;
// bubbles (idle stretches) are shaded behind them. Rows are the value axis
// (row r spans r +- 0.5; reverse the axis to put device 0 on top), time the key axis.
#pragma once

#include <qcustomplot.h>

#include <limits>
#include <vector>

#include "core/trace/bubbles.h"
#include "core/trace/trace_events.h"

namespace pipelab {

class TimelinePlottable : public QCPAbstractPlottable {
  Q_OBJECT

 public:
  TimelinePlottable(QCPAxis* key_axis, QCPAxis* value_axis);

  // Key axis units per trace time unit (1000 draws a trace in seconds in ms).
  void setTimeScale(double scale);
  double timeScale() const { return time_scale_; }

  // Replaces what is drawn.
  void setEvents(const std::vector<TraceEvent>& events);
  // Adds ops recorded since the last call (a live run).
  void addEvents(const std::vector<TraceEvent>& events);
  void setBubbles(const std::vector<BubbleSlice>& bubbles);
  // Draws each op's weight version (label and colour strip); off by default.
  void setWeightVersionsShown(bool shown) { weight_versions_shown_ = shown; }
  bool weightVersionsShown() const { return weight_versions_shown_; }
  void clearAll();

  // Draws only what had happened by `trace_time` (the playback clock), cutting
  // bars that are still running at that moment; +infinity shows everything.
  void setNow(double trace_time);
  double now() const { return now_; }

  int eventCount() const { return static_cast<int>(events_.size()); }
  int bubbleCount() const { return static_cast<int>(shades_.size()); }
  // Ops that have started by now() (what a viewer can see when zoomed out).
  int shownEventCount() const;
  // Bars the last repaint actually drew (after range and pixel culling).
  int lastDrawnBarCount() const { return last_drawn_bars_; }
  // Weight-version strips the last repaint drew.
  int lastDrawnVersionStripCount() const { return last_drawn_version_strips_; }
  const std::vector<TraceEvent>& events() const { return events_; }

  // The op under a widget pixel (nullptr when there is none).
  const TraceEvent* eventAt(const QPointF& pixel) const;

  // Key range of everything shown by now(), in key units.
  QCPRange shownKeyRange(bool* found) const;

  double selectTest(const QPointF& pos, bool only_selectable,
                    QVariant* details = nullptr) const override;
  QCPRange getKeyRange(bool& found_range,
                       QCP::SignDomain in_sign_domain = QCP::sdBoth) const override;
  QCPRange getValueRange(bool& found_range, QCP::SignDomain in_sign_domain = QCP::sdBoth,
                         const QCPRange& in_key_range = QCPRange()) const override;

 protected:
  void draw(QCPPainter* painter) override;
  void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override;

 private:
  struct Bar {
    double begin = 0;  // key units
    double end = 0;
    int row = 0;
    bool communication = false;
    int event = 0;  // index into events_
  };
  struct Shade {
    double begin = 0;
    double end = 0;
    int row = 0;
  };

  void appendBars(size_t first_event);
  // The first bar that may still be visible at key `key` (bars are sorted by begin).
  std::vector<Bar>::const_iterator firstBarEndingAfter(double key) const;
  QRectF barRect(const Bar& bar, double end_key) const;
  double nowKey() const;

  double time_scale_ = 1.0;
  double now_ = std::numeric_limits<double>::infinity();
  std::vector<TraceEvent> events_;
  std::vector<Bar> bars_;      // sorted by begin
  std::vector<Shade> shades_;  // bubbles, sorted by begin
  double longest_bar_ = 0;     // key units, bounds the backwards search
  double longest_shade_ = 0;
  int rows_ = 0;
  int last_drawn_bars_ = 0;
  int last_drawn_version_strips_ = 0;
  bool weight_versions_shown_ = false;
};

// The label drawn inside a bar: the micro-batch number ("3"), "U" for an
// optimizer step, empty for communication. With `weight_version`, an op that
// reads weights adds the version it reads ("3 v2") and an update the version it
// makes current ("U v3").
QString bar_label(const Op& op, bool weight_version = false);
// Whether an op has a weight version worth drawing: it reads or writes weights.
bool has_weight_version(const Op& op);

}  // namespace pipelab
