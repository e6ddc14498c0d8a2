#include "ui/timeline/timeline_chart.h"

#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <optional>

#include "core/plan/parallel_plan.h"
#include "core/trace/bubbles.h"
#include "ui/number_text.h"
#include "ui/timeline/device_row_label.h"
#include "ui/timeline/op_colors.h"
#include "ui/timeline/op_legend_item.h"
#include "ui/timeline/time_axis_unit.h"
#include "ui/timeline/timeline_plottable.h"

namespace pipelab {
namespace {

// One legend entry per colour role, in legend order, and the name it goes by.
struct LegendEntry {
  OpColorRole role;
  const char* text;
};
constexpr LegendEntry kLegendEntries[] = {
    {OpColorRole::Forward, QT_TRANSLATE_NOOP("pipelab::TimelineChart", "F forward")},
    {OpColorRole::Backward, QT_TRANSLATE_NOOP("pipelab::TimelineChart", "B backward")},
    {OpColorRole::BackwardInput, QT_TRANSLATE_NOOP("pipelab::TimelineChart", "BI input grad")},
    {OpColorRole::BackwardWeight, QT_TRANSLATE_NOOP("pipelab::TimelineChart", "BW weight grad")},
    {OpColorRole::Update, QT_TRANSLATE_NOOP("pipelab::TimelineChart", "U update")},
    {OpColorRole::Recompute, QT_TRANSLATE_NOOP("pipelab::TimelineChart", "recompute")},
    {OpColorRole::PointToPoint, QT_TRANSLATE_NOOP("pipelab::TimelineChart", "send/recv")},
    {OpColorRole::AllReduce, QT_TRANSLATE_NOOP("pipelab::TimelineChart", "all-reduce (RS, AG)")},
    {OpColorRole::AllToAll, QT_TRANSLATE_NOOP("pipelab::TimelineChart", "all-to-all")},
    {OpColorRole::ParameterServer, QT_TRANSLATE_NOOP("pipelab::TimelineChart", "push/pull")},
    {OpColorRole::HostTransfer, QT_TRANSLATE_NOOP("pipelab::TimelineChart", "offload/reload")},
};

bool pulls_weights(const std::vector<TraceEvent>& events) {
  return std::any_of(events.begin(), events.end(),
                     [](const TraceEvent& event) { return event.op.kind == OpKind::PullWeights; });
}

// Asynchronous pipeline schedules run a stage's ops on several weight
// versions, and asynchronous data parallel's replicas compute on whichever
// version they last pulled: both are worth drawing on the bars.
bool weight_versions_matter(const Trace& trace) {
  const std::optional<ScheduleKind> kind = parse_schedule(trace.schedule);
  return (kind && is_asynchronous(*kind)) || pulls_weights(trace.events);
}

}  // namespace

QString describe_trace_event(const TraceEvent& event, bool unit_time) {
  const Op& op = event.op;
  QStringList lines;
  QString head = QString::fromLatin1(op_kind_name(op.kind));
  if (op.microbatch >= 0) head += QObject::tr(" · micro-batch %1").arg(op.microbatch);
  head += QObject::tr(" · stage %1").arg(op.stage);
  if (op.chunk > 0) head += QObject::tr(" (chunk %1)").arg(op.chunk);
  lines << head;
  QString where = QObject::tr("device %1 · step %2").arg(event.device).arg(op.step);
  if (op.kind == OpKind::Update)
    where += QObject::tr(" · writes weight version %1").arg(op.weight_version);
  else if (is_compute(op.kind))
    where += QObject::tr(" · reads weight version %1").arg(op.weight_version);
  if (op.weight_delay > 0)
    where += QObject::tr(" · %1 updates after its forward's weights").arg(op.weight_delay);
  lines << where;
  if (op.peer >= 0) lines << QObject::tr("peer: device %1").arg(op.peer);
  if (op.group == CommGroup::TensorParallel) lines << QObject::tr("group: tensor parallel");
  if (op.group == CommGroup::DataParallel) lines << QObject::tr("group: data parallel");
  if (op.group == CommGroup::ExpertParallel) lines << QObject::tr("group: expert parallel");
  if (op.group == CommGroup::ContextParallel) lines << QObject::tr("group: context parallel");
  const int64_t bytes = event.bytes > 0 ? event.bytes : op.bytes;
  if (bytes > 0) lines << QObject::tr("payload: %1").arg(bytes_text(double(bytes)));
  lines << QObject::tr("duration %1 (from %2 to %3)")
               .arg(trace_time_text(event.t_end - event.t_begin, unit_time),
                    trace_time_text(event.t_begin, unit_time),
                    trace_time_text(event.t_end, unit_time));
  return lines.join('\n');
}

TimelineChart::TimelineChart(QWidget* parent) : QCustomPlot(parent) {
  setNoAntialiasingOnDrag(true);
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  axisRect()->setRangeDrag(Qt::Horizontal);
  axisRect()->setRangeZoom(Qt::Horizontal);

  bars_ = new TimelinePlottable(xAxis, yAxis);

  row_ticker_.reset(new QCPAxisTickerText);
  yAxis->setTicker(row_ticker_);
  yAxis->setRangeReversed(true);  // device 0 on top
  yAxis->grid()->setVisible(false);
  yAxis->setTickLength(0, 0);
  yAxis->setSubTicks(false);
  yAxis->setRange(-0.5, 0.5);
  xAxis->setLabel(tr("time (ms)"));
  xAxis->setRange(0, 1);

  plotLayout()->insertRow(0);
  title_ = new QCPTextElement(this, QString(), QFont(font().family(), 10, QFont::Bold));
  plotLayout()->addElement(0, 0, title_);

  // Legend in its own row under the axis rect, laid out left to right and
  // kept compact on the left by a stretching empty cell beside it.
  axisRect()->insetLayout()->take(legend);
  legend_row_ = new QCPLayoutGrid;
  legend_row_->setMargins(QMargins(5, 0, 5, 5));
  legend_row_->addElement(0, 0, legend);
  legend_row_->addElement(0, 1, new QCPLayoutElement(this));
  legend_row_->setColumnStretchFactor(0, 0.001);
  legend_row_->setColumnStretchFactor(1, 1);
  legend->setFillOrder(QCPLegend::foColumnsFirst);
  legend->setBorderPen(Qt::NoPen);
  legend->setIconSize(14, 10);
  legend->setVisible(true);
  plotLayout()->addElement(2, 0, legend_row_);
  plotLayout()->setRowStretchFactor(2, 0.001);
  rebuildLegend();

  // The warm-up mark: a grey veil over the bars from 0 to the first step's end.
  warmup_shade_ = new QCPItemRect(this);
  warmup_shade_->setPen(QPen(QColor(90, 90, 90), 1, Qt::DashLine));
  warmup_shade_->setBrush(QColor(110, 110, 110, 45));
  warmup_label_ = new QCPItemText(this);
  warmup_label_->setText(tr("warm-up (left out of the statistics)"));
  warmup_label_->setFont(QFont(font().family(), 8));
  warmup_label_->setColor(QColor(60, 60, 60));
  warmup_label_->setBrush(QColor(255, 255, 255, 200));  // readable over the bars
  warmup_label_->setPadding(QMargins(3, 1, 3, 1));
  warmup_label_->setPositionAlignment(Qt::AlignTop | Qt::AlignLeft);
  warmup_label_->setClipToAxisRect(true);
  for (QCPItemPosition* corner :
       {warmup_shade_->topLeft, warmup_shade_->bottomRight, warmup_label_->position}) {
    corner->setTypeX(QCPItemPosition::ptPlotCoords);
    corner->setTypeY(QCPItemPosition::ptAxisRectRatio);
  }
  placeWarmup();

  connect(this, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) {
      emit userPanned();
      return;
    }
    showTooltip(event);
  });
  connect(this, &QCustomPlot::mouseWheel, this, [this] { emit userZoomed(); });
  connect(this, &QCustomPlot::mouseDoubleClick, this, [this] {
    fitAll();
    replot(rpQueuedReplot);
  });
}

void TimelineChart::resizeEvent(QResizeEvent* event) {
  // A chart shown in a splitter is resized to nothing until the splitter lays
  // it out; drawing it then only makes QCustomPlot warn about an empty buffer.
  if (event->size().isEmpty()) return;
  QCustomPlot::resizeEvent(event);
  if (row_count_ > 0) applyRowLabels();  // the number of labels that fit changed
  applyTitle();                          // so did the title's room
}

QSize TimelineChart::minimumSizeHint() const {
  // QCustomPlot asks for its title's whole width; a long title (a problem
  // quoted in the predicted chart's) would widen the window past the screen.
  QSize hint = QCustomPlot::minimumSizeHint();
  hint.setWidth(std::min(hint.width(), kMinimumWidth));
  return hint;
}

void TimelineChart::setTitle(const QString& title) {
  full_title_ = title;
  applyTitle();
}

QString TimelineChart::title() const { return full_title_; }

void TimelineChart::applyTitle() {
  // Cut at the end with "…" when wider than the chart on screen (a quoted
  // problem is whole in its panel); a hidden chart exports at its own size.
  if (!isVisible()) {
    title_->setText(full_title_);
    return;
  }
  const QFontMetrics metrics(title_->font());
  title_->setText(metrics.elidedText(full_title_, Qt::ElideRight, std::max(width() - 20, 100)));
}

void TimelineChart::setRowLabels(const QStringList& labels) {
  row_labels_ = labels;
  row_count_ = static_cast<int>(labels.size());
  applyRowLabels();
  yAxis->setRange(-0.5, std::max(row_count_, 1) - 0.5);
}

// With more rows than lines of text fit, labels would overprint into a black
// band: label every step-th row so each label has a line of its own.
void TimelineChart::applyRowLabels() {
  const int line = QFontMetrics(yAxis->tickLabelFont()).height();
  const int height = axisRect()->height() > 0 ? axisRect()->height() : height_hint_;
  const int fitting = std::max(1, height / std::max(1, line));
  const int step = std::max(1, (row_count_ + fitting - 1) / fitting);
  QVector<double> ticks;
  QVector<QString> names;
  for (int row = 0; row < row_count_; row += step) {
    ticks << row;
    names << row_labels_[row];
  }
  row_ticker_->setTicks(ticks, names);
  yAxis->setRange(-0.5, std::max(row_count_, 1) - 0.5);
}

void TimelineChart::showTrace(const Trace& trace, double bubble_min_duration) {
  unit_time_ = trace.time_unit == "unit";
  bars_->clearAll();
  const TimeAxisUnit unit = time_axis_unit(trace);
  bars_->setTimeScale(unit.scale);
  xAxis->setLabel(unit.label);
  const int rows = device_count(trace);
  QStringList labels;
  for (int device = 0; device < rows; ++device) labels << device_row_label(trace, device);
  setRowLabels(labels);
  bars_->setEvents(trace.events);
  updateBubbles(trace, bubble_min_duration);
  placeWarmup();  // the time scale may have changed
  legend_roles_.clear();
  for (const TraceEvent& event : trace.events)
    legend_roles_.insert(op_kind_facts(event.op.kind).color_role);
  bars_->setWeightVersionsShown(weight_versions_matter(trace));
  rebuildLegend();
}

void TimelineChart::appendEvents(const std::vector<TraceEvent>& events) {
  bars_->addEvents(events);
  bool new_kind = false;
  for (const TraceEvent& event : events)
    new_kind |= legend_roles_.insert(op_kind_facts(event.op.kind).color_role).second;
  // A live asynchronous data-parallel run shows it pulls with its first pull.
  if (!bars_->weightVersionsShown() && pulls_weights(events)) {
    bars_->setWeightVersionsShown(true);
    new_kind = true;
  }
  if (new_kind) rebuildLegend();
}

void TimelineChart::updateBubbles(const Trace& trace, double bubble_min_duration) {
  bars_->setBubbles(trace.events.empty() ? std::vector<BubbleSlice>{}
                                         : find_bubbles(trace, bubble_min_duration));
}

void TimelineChart::setNow(double trace_time) { bars_->setNow(trace_time); }

void TimelineChart::setTimeUnit(const TimeAxisUnit& unit) {
  bars_->setTimeScale(unit.scale);
  xAxis->setLabel(unit.label);
  placeWarmup();
}

void TimelineChart::setWarmupEnd(double trace_time) {
  warmup_end_ = trace_time;
  placeWarmup();
}

void TimelineChart::placeWarmup() {
  const bool shown = std::isfinite(warmup_end_) && warmup_end_ > 0;
  warmup_shade_->setVisible(shown);
  warmup_label_->setVisible(shown);
  if (!shown) return;
  const double end = warmup_end_ * bars_->timeScale();
  warmup_shade_->topLeft->setCoords(0, 0);
  warmup_shade_->bottomRight->setCoords(end, 1);
  warmup_label_->position->setCoords(0, 0);
}

void TimelineChart::fitAll() {
  bool found = false;
  const QCPRange range = bars_->shownKeyRange(&found);
  if (!found) return;
  const double margin = std::max(range.size() * 0.01, 1e-9);
  xAxis->setRange(std::min(0.0, range.lower), range.upper + margin);
}

void TimelineChart::showTimeRange(double begin, double end) {
  const double scale = bars_->timeScale();
  xAxis->setRange(begin * scale, end * scale);
}

void TimelineChart::setLegendShown(bool shown) {
  if (shown == legend_shown_) return;
  legend_shown_ = shown;
  // A hidden legend leaves the layout altogether: an empty legend would
  // otherwise cap the column's width at its margins.
  if (shown) {
    plotLayout()->addElement(2, 0, legend_row_);
    plotLayout()->setRowStretchFactor(2, 0.001);
  } else {
    plotLayout()->take(legend_row_);
    plotLayout()->simplify();
  }
  rebuildLegend();
}

void TimelineChart::rebuildLegend() {
  legend->clearItems();
  if (!legend_shown_) return;
  for (const LegendEntry& entry : kLegendEntries) {
    // Before any op is known, show the basic trio so the chart explains itself.
    const bool basic = entry.role == OpColorRole::Forward || entry.role == OpColorRole::Backward ||
                       entry.role == OpColorRole::Update;
    if (legend_roles_.count(entry.role) == 0 && !(legend_roles_.empty() && basic)) continue;
    legend->addItem(new OpLegendItem(legend, op_role_color(entry.role), tr(entry.text)));
  }
  legend->addItem(new OpLegendItem(legend, bubble_color(), tr("bubble (idle)"), true));
  if (bars_->weightVersionsShown()) {
    // Asynchronous data parallel's replicas take versions from a pull, not a U.
    const QString text =
        legend_roles_.count(op_kind_facts(OpKind::PullWeights).color_role)
            ? tr("v2, strip: weight version a replica computes on (one colour per version), the "
                 "newest it pulled")
            : tr("v2, strip: weight version an op reads (one colour per version); U v3 makes v3 "
                 "current");
    legend->addItem(new OpLegendItem(legend, weight_version_color(1), text));
  }
}

void TimelineChart::showTooltip(QMouseEvent* event) {
  const TraceEvent* hit = bars_->eventAt(event->position());
  if (!hit) {
    QToolTip::hideText();
    return;
  }
  QToolTip::showText(event->globalPosition().toPoint(), describe_trace_event(*hit, unit_time_),
                     this);
}

}  // namespace pipelab
