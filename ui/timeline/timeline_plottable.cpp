#include "ui/timeline/timeline_plottable.h"

#include <algorithm>
#include <cmath>

#include "ui/timeline/op_colors.h"

namespace pipelab {
namespace {

// Vertical extent of the two lanes inside a row (row r spans r - 0.5 .. r + 0.5).
constexpr double kComputeTop = -0.38;
constexpr double kComputeBottom = 0.22;
constexpr double kCommTop = 0.26;
constexpr double kCommBottom = 0.40;
constexpr double kRowTop = -0.45;
constexpr double kRowBottom = 0.45;
// Rows fewer pixels high than this draw compute bars across the whole row.
constexpr double kDenseRowPixels = 6;

}  // namespace

bool has_weight_version(const Op& op) {
  const OpKindFacts& facts = op_kind_facts(op.kind);
  return facts.family == OpFamily::Compute && (facts.reads_weights || facts.writes_weights);
}

QString bar_label(const Op& op, bool weight_version) {
  QString label;
  if (op.kind == OpKind::Update)
    label = QStringLiteral("U");
  else if (is_communication(op.kind) || op.microbatch < 0)
    return {};
  else
    label = QString::number(op.microbatch);
  if (weight_version && has_weight_version(op))
    label += QStringLiteral(" v%1").arg(op.weight_version);
  return label;
}

TimelinePlottable::TimelinePlottable(QCPAxis* key_axis, QCPAxis* value_axis)
    : QCPAbstractPlottable(key_axis, value_axis) {
  setSelectable(QCP::stNone);
  setAntialiasedFill(false);
  setPen(QPen(QColor(255, 255, 255, 160), 0));
}

void TimelinePlottable::setTimeScale(double scale) {
  if (scale == time_scale_) return;
  time_scale_ = scale;
  setEvents(std::vector<TraceEvent>(events_));
}

void TimelinePlottable::clearAll() {
  events_.clear();
  bars_.clear();
  shades_.clear();
  longest_bar_ = 0;
  longest_shade_ = 0;
  rows_ = 0;
}

void TimelinePlottable::setEvents(const std::vector<TraceEvent>& events) {
  std::vector<Shade> shades = std::move(shades_);
  const double longest_shade = longest_shade_;
  clearAll();
  shades_ = std::move(shades);
  longest_shade_ = longest_shade;
  events_ = events;
  appendBars(0);
}

void TimelinePlottable::addEvents(const std::vector<TraceEvent>& events) {
  const size_t first = events_.size();
  events_.insert(events_.end(), events.begin(), events.end());
  appendBars(first);
}

void TimelinePlottable::appendBars(size_t first_event) {
  const size_t old_size = bars_.size();
  for (size_t i = first_event; i < events_.size(); ++i) {
    const TraceEvent& event = events_[i];
    Bar bar;
    bar.begin = event.t_begin * time_scale_;
    bar.end = std::max(event.t_end, event.t_begin) * time_scale_;
    bar.row = event.device;
    bar.communication = is_communication(event.op.kind);
    bar.event = static_cast<int>(i);
    longest_bar_ = std::max(longest_bar_, bar.end - bar.begin);
    rows_ = std::max(rows_, event.device + 1);
    bars_.push_back(bar);
  }
  // Keep one sorted vector: sort the new tail, then merge it in.
  const auto by_begin = [](const Bar& a, const Bar& b) { return a.begin < b.begin; };
  std::sort(bars_.begin() + static_cast<std::ptrdiff_t>(old_size), bars_.end(), by_begin);
  std::inplace_merge(bars_.begin(), bars_.begin() + static_cast<std::ptrdiff_t>(old_size),
                     bars_.end(), by_begin);
}

void TimelinePlottable::setBubbles(const std::vector<BubbleSlice>& bubbles) {
  shades_.clear();
  longest_shade_ = 0;
  for (const BubbleSlice& slice : bubbles) {
    Shade shade{slice.t_begin * time_scale_, slice.t_end * time_scale_, slice.device};
    longest_shade_ = std::max(longest_shade_, shade.end - shade.begin);
    rows_ = std::max(rows_, slice.device + 1);
    shades_.push_back(shade);
  }
  std::sort(shades_.begin(), shades_.end(),
            [](const Shade& a, const Shade& b) { return a.begin < b.begin; });
}

void TimelinePlottable::setNow(double trace_time) { now_ = trace_time; }

double TimelinePlottable::nowKey() const { return std::isinf(now_) ? now_ : now_ * time_scale_; }

int TimelinePlottable::shownEventCount() const {
  const double now_key = nowKey();
  const auto end = std::upper_bound(bars_.begin(), bars_.end(), now_key,
                                    [](double key, const Bar& bar) { return key < bar.begin; });
  return static_cast<int>(end - bars_.begin());
}

std::vector<TimelinePlottable::Bar>::const_iterator TimelinePlottable::firstBarEndingAfter(
    double key) const {
  // No bar is longer than longest_bar_, so none that begins before
  // key - longest_bar_ can reach key.
  const double earliest = key - longest_bar_;
  return std::lower_bound(bars_.begin(), bars_.end(), earliest,
                          [](const Bar& bar, double k) { return bar.begin < k; });
}

QRectF TimelinePlottable::barRect(const Bar& bar, double end_key) const {
  // Rows a few pixels high (a hundred devices): a compute bar fills its row,
  // out to whole pixels. The gap below it, and edges that cover a pixel in
  // part, blended the bars with the background into pale stripes.
  const bool dense_rows =
      std::abs(valueAxis()->coordToPixel(1) - valueAxis()->coordToPixel(0)) < kDenseRowPixels;
  if (dense_rows && !bar.communication) {
    QRectF rect =
        QRectF(coordsToPixels(bar.begin, bar.row - 0.5), coordsToPixels(end_key, bar.row + 0.5))
            .normalized();
    const double top = std::floor(rect.top());
    rect.setBottom(std::max(top + 1, std::ceil(rect.bottom())));
    rect.setTop(top);
    return rect;
  }
  const double top = bar.row + (bar.communication ? kCommTop : kComputeTop);
  const double bottom = bar.row + (bar.communication ? kCommBottom : kComputeBottom);
  const QPointF a = coordsToPixels(bar.begin, top);
  const QPointF b = coordsToPixels(end_key, bottom);
  return QRectF(a, b).normalized();
}

void TimelinePlottable::draw(QCPPainter* painter) {
  last_drawn_bars_ = 0;
  last_drawn_version_strips_ = 0;
  if (!keyAxis() || !valueAxis()) return;
  const QCPRange visible = keyAxis()->range();
  const double now_key = nowKey();
  const double last_key = std::min(visible.upper, now_key);
  const QRect clip = clipRect();

  // Bubbles first, so bars draw over their edges.
  painter->setPen(Qt::NoPen);
  const QColor bubble_fill = [] {
    QColor color = bubble_color();
    color.setAlpha(50);
    return color;
  }();
  const auto first_shade =
      std::lower_bound(shades_.begin(), shades_.end(), visible.lower - longest_shade_,
                       [](const Shade& shade, double key) { return shade.begin < key; });
  for (auto it = first_shade; it != shades_.end() && it->begin <= last_key; ++it) {
    if (it->end < visible.lower) continue;
    const double end = std::min(it->end, now_key);
    if (end <= it->begin) continue;
    const QRectF rect = QRectF(coordsToPixels(it->begin, it->row + kRowTop),
                               coordsToPixels(end, it->row + kRowBottom))
                            .normalized();
    painter->fillRect(rect, bubble_fill);
    painter->fillRect(rect, bubble_brush());
  }

  // Bars: skip any that would land entirely on pixels already painted in its
  // row and lane, so zoomed-out views cost about one bar per pixel column.
  std::vector<double> painted_right(static_cast<size_t>(std::max(rows_, 1)) * 2,
                                    -std::numeric_limits<double>::infinity());
  QFont font = painter->font();
  font.setPointSizeF(7.5);
  painter->setFont(font);
  const QFontMetricsF metrics(font);
  const QPen outline = pen();
  const bool outline_bars = outline.style() != Qt::NoPen;
  for (auto it = firstBarEndingAfter(visible.lower); it != bars_.end() && it->begin <= last_key;
       ++it) {
    const Bar& bar = *it;
    if (bar.end < visible.lower) continue;
    const double end = std::min(bar.end, now_key);
    QRectF rect = barRect(bar, end);
    if (rect.right() < clip.left() || rect.left() > clip.right()) continue;
    double& right = painted_right[static_cast<size_t>(bar.row) * 2 + (bar.communication ? 1 : 0)];
    if (rect.right() <= right + 0.5) continue;
    if (rect.width() < 1.0) rect.setWidth(1.0);  // every op stays visible
    right = rect.right();

    const TraceEvent& event = events_[static_cast<size_t>(bar.event)];
    const QColor fill = op_color(event.op.kind);
    // An outline on a bar a few pixels thin is all outline: with 128 rows in
    // 120 pixels the bars read as pale stripes, not as their ops' colours.
    const bool outlined = outline_bars && rect.width() > 4 && rect.height() > 4;
    painter->setPen(outlined ? outline : QPen(Qt::NoPen));
    painter->setBrush(fill);
    painter->drawRect(rect);
    ++last_drawn_bars_;

    if (bar.communication) continue;
    QRectF text_rect = rect;
    if (weight_versions_shown_ && has_weight_version(event.op) && rect.width() >= 2) {
      // The version's colour along the bottom edge, under the label.
      const double strip = std::max(3.0, rect.height() * 0.25);
      painter->setPen(Qt::NoPen);
      painter->setBrush(weight_version_color(event.op.weight_version));
      painter->drawRect(QRectF(rect.left(), rect.bottom() - strip, rect.width(), strip));
      text_rect.setBottom(rect.bottom() - strip);
      ++last_drawn_version_strips_;
    }
    // The version in the label when it fits, else the micro-batch alone.
    QString label = bar_label(event.op, weight_versions_shown_);
    if (rect.width() < metrics.horizontalAdvance(label) + 4) label = bar_label(event.op);
    if (label.isEmpty()) continue;
    if (text_rect.height() < metrics.height()) text_rect = rect;  // over the strip, then
    if (rect.width() < metrics.horizontalAdvance(label) + 4 || rect.height() < metrics.height())
      continue;
    painter->setPen(text_color_on(fill));
    painter->drawText(text_rect, Qt::AlignCenter, label);
  }
}

void TimelinePlottable::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const {
  painter->setPen(Qt::NoPen);
  painter->setBrush(op_color(OpKind::Forward));
  painter->drawRect(rect);
}

const TraceEvent* TimelinePlottable::eventAt(const QPointF& pixel) const {
  if (!keyAxis() || !valueAxis() || bars_.empty()) return nullptr;
  double key = 0;
  double value = 0;
  pixelsToCoords(pixel, key, value);
  const int row = static_cast<int>(std::lround(value));
  const double offset = value - row;
  // Bars narrower than a pixel are drawn one pixel wide; accept that much slack.
  double key_plus_one = 0;
  double unused = 0;
  pixelsToCoords(pixel + QPointF(2, 0), key_plus_one, unused);
  const double slack = std::fabs(key_plus_one - key);
  const double now_key = nowKey();
  const TraceEvent* found = nullptr;
  for (auto it = firstBarEndingAfter(key - slack); it != bars_.end() && it->begin <= key + slack;
       ++it) {
    if (it->row != row || it->begin > now_key) continue;
    const double top = it->communication ? kCommTop : kComputeTop;
    const double bottom = it->communication ? kCommBottom : kComputeBottom;
    if (offset < top || offset > bottom) continue;
    if (key < it->begin - slack || key > std::min(it->end, now_key) + slack) continue;
    found = &events_[static_cast<size_t>(it->event)];
    if (key >= it->begin && key <= it->end) break;  // an exact hit beats a near one
  }
  return found;
}

QCPRange TimelinePlottable::shownKeyRange(bool* found) const {
  const double now_key = nowKey();
  double lower = std::numeric_limits<double>::infinity();
  double upper = -std::numeric_limits<double>::infinity();
  for (const Bar& bar : bars_) {
    if (bar.begin > now_key) break;
    lower = std::min(lower, bar.begin);
    upper = std::max(upper, std::min(bar.end, now_key));
  }
  *found = lower <= upper;
  return *found ? QCPRange(lower, upper) : QCPRange(0, 1);
}

double TimelinePlottable::selectTest(const QPointF&, bool, QVariant*) const {
  // Bars are not selectable; the view shows tooltips through eventAt(). Never
  // claiming the mouse keeps dragging and zooming on the axis rect.
  return -1;
}

QCPRange TimelinePlottable::getKeyRange(bool& found_range, QCP::SignDomain) const {
  return shownKeyRange(&found_range);
}

QCPRange TimelinePlottable::getValueRange(bool& found_range, QCP::SignDomain,
                                          const QCPRange&) const {
  found_range = rows_ > 0;
  return QCPRange(-0.5, std::max(rows_, 1) - 0.5);
}

}  // namespace pipelab
