#include "ui/panels/memory_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QCoreApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "ui/models/run_controller.h"
#include "ui/number_text.h"
#include "ui/timeline/device_row_label.h"
#include "ui/timeline/op_colors.h"
#include "ui/timeline/time_axis_unit.h"

namespace pipelab {
namespace {

// The binary unit that keeps the largest value readable, and its name.
struct ByteUnit {
  double divisor = 1;
  QString name;
};
ByteUnit byte_unit_for(double max_bytes) {
  if (max_bytes >= 1024.0 * 1024 * 1024) return {1024.0 * 1024 * 1024, QStringLiteral("GiB")};
  if (max_bytes >= 1024.0 * 1024) return {1024.0 * 1024, QStringLiteral("MiB")};
  if (max_bytes >= 1024.0) return {1024.0, QStringLiteral("KiB")};
  return {1.0, QStringLiteral("B")};
}

// Above this many devices the totals' legend names the selected device only:
// a row per device pushed the stacked chart below into a strip a few pixels
// high (32 devices in a dock 300 pixels high).
constexpr int kMaxDevicesInLegend = 8;

// Curves with more points than this are thinned: a long run records hundreds
// of thousands of samples, far more than a chart has pixels.
constexpr size_t kMaxPointsPerCurve = 1500;

// Keeps, per time bucket, the sample with the highest total, so the curve's
// peaks (what a memory chart is read for) survive the thinning.
std::vector<const MemorySample*> thin_out(const std::vector<const MemorySample*>& samples) {
  if (samples.size() <= kMaxPointsPerCurve) return samples;
  const double begin = samples.front()->t;
  const double span = std::max(samples.back()->t - begin, 1e-12);
  std::vector<const MemorySample*> kept;
  kept.reserve(kMaxPointsPerCurve + 1);
  int current_bucket = -1;
  for (const MemorySample* sample : samples) {
    const int bucket =
        std::min<int>(static_cast<int>((sample->t - begin) / span * kMaxPointsPerCurve),
                      static_cast<int>(kMaxPointsPerCurve) - 1);
    if (bucket != current_bucket) {
      kept.push_back(sample);
      current_bucket = bucket;
    } else if (total_bytes(sample->bytes) > total_bytes(kept.back()->bytes)) {
      kept.back() = sample;
    }
  }
  if (kept.back() != samples.back()) kept.push_back(samples.back());  // where the curve ends
  return kept;
}

// The legend's names of the stacked memory categories (core's names are the
// keys of exported files, with underscores).
struct CategoryTitle {
  MemoryCategory category;
  const char* text;
};
constexpr CategoryTitle kCategoryTitles[] = {
    {MemoryCategory::Weights, QT_TRANSLATE_NOOP("pipelab::MemoryView", "weights")},
    {MemoryCategory::Gradients, QT_TRANSLATE_NOOP("pipelab::MemoryView", "gradients")},
    {MemoryCategory::OptimizerState, QT_TRANSLATE_NOOP("pipelab::MemoryView", "optimizer state")},
    {MemoryCategory::Activations, QT_TRANSLATE_NOOP("pipelab::MemoryView", "activations")},
    {MemoryCategory::StashedWeights, QT_TRANSLATE_NOOP("pipelab::MemoryView", "stashed weights")},
    {MemoryCategory::CommBuffers, QT_TRANSLATE_NOOP("pipelab::MemoryView", "comm buffers")},
    {MemoryCategory::Workspace, QT_TRANSLATE_NOOP("pipelab::MemoryView", "workspace")},
    {MemoryCategory::Host, QT_TRANSLATE_NOOP("pipelab::MemoryView", "host")},
};

}  // namespace

QString memory_category_title(MemoryCategory category) {
  for (const CategoryTitle& title : kCategoryTitles)
    if (title.category == category)
      return QCoreApplication::translate("pipelab::MemoryView", title.text);
  return QString::fromLatin1(memory_category_name(category));
}

MemoryView::MemoryView(QWidget* parent) : QWidget(parent) {
  plot_ = new QCustomPlot(this);
  plot_->setObjectName(QStringLiteral("memoryPlot"));
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  totals_rect_ = plot_->axisRect();
  stacked_rect_ = new QCPAxisRect(plot_);
  plot_->plotLayout()->addElement(1, 0, stacked_rect_);
  for (QCPAxisRect* rect : {totals_rect_, stacked_rect_}) {
    rect->setRangeDrag(Qt::Horizontal);
    rect->setRangeZoom(Qt::Horizontal);
  }
  auto* margins = new QCPMarginGroup(plot_);
  totals_rect_->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
  stacked_rect_->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
  // Panning one time axis pans the other.
  QCPAxis* totals_x = totals_rect_->axis(QCPAxis::atBottom);
  QCPAxis* stacked_x = stacked_rect_->axis(QCPAxis::atBottom);
  connect(totals_x, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), stacked_x,
          qOverload<const QCPRange&>(&QCPAxis::setRange));
  connect(stacked_x, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), totals_x,
          qOverload<const QCPRange&>(&QCPAxis::setRange));

  // Legends beside the charts, not over the curves.
  // Each sits at the top of its cell, above an empty stretching one.
  totals_rect_->insetLayout()->take(plot_->legend);
  stacked_legend_ = new QCPLegend;
  int row = 0;
  for (QCPLegend* legend : {plot_->legend, stacked_legend_}) {
    auto* cell = new QCPLayoutGrid;
    plot_->plotLayout()->addElement(row++, 1, cell);
    cell->addElement(0, 0, legend);
    cell->addElement(1, 0, new QCPLayoutElement(plot_));
    cell->setRowStretchFactor(0, 0.001);
  }
  plot_->plotLayout()->setColumnStretchFactor(1, 0.001);
  stacked_legend_->setLayer(QStringLiteral("legend"));  // once it belongs to the plot
  for (QCPLegend* legend : {plot_->legend, stacked_legend_}) {
    legend->setVisible(true);
    legend->setFont(QFont(font().family(), 8));
    legend->setBorderPen(Qt::NoPen);
    legend->setMargins(QMargins(4, 2, 4, 2));
  }

  // The selected device's curve is drawn over the others, which may run along it.
  plot_->addLayer(QStringLiteral("selectedDevice"), plot_->layer(QStringLiteral("main")),
                  QCustomPlot::limAbove);

  peak_tracer_ = new QCPItemTracer(plot_);
  peak_tracer_->setClipAxisRect(stacked_rect_);
  peak_tracer_->position->setAxes(stacked_x, stacked_rect_->axis(QCPAxis::atLeft));
  peak_tracer_->setStyle(QCPItemTracer::tsCircle);
  peak_tracer_->setSize(9);
  peak_tracer_->setPen(QPen(Qt::black, 1.5));
  peak_label_ = new QCPItemText(plot_);
  peak_label_->setClipAxisRect(stacked_rect_);
  peak_label_->position->setParentAnchor(peak_tracer_->position);
  peak_label_->position->setCoords(0, -14);  // pixels above the tracer
  peak_label_->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
  peak_label_->setFont(QFont(font().family(), 8, QFont::Bold));
  peak_label_->setClipToAxisRect(false);

  // QCustomPlot aims at five ticks whatever the size; in a narrow or short
  // dock their labels ran into each other ("50 100150200"). The count follows
  // the layout, so a changed count is drawn by the next replot.
  connect(plot_, &QCustomPlot::afterLayout, this, [this] {
    bool changed = false;
    for (QCPAxisRect* rect : {totals_rect_, stacked_rect_}) {
      const int x_ticks = std::max(2, rect->width() / kPixelsPerTimeTick);
      const int y_ticks = std::max(2, rect->height() / kPixelsPerByteTick);
      for (auto [axis, ticks] : {std::pair{rect->axis(QCPAxis::atBottom), x_ticks},
                                 std::pair{rect->axis(QCPAxis::atLeft), y_ticks}}) {
        if (axis->ticker()->tickCount() == ticks) continue;
        axis->ticker()->setTickCount(ticks);
        changed = true;
      }
    }
    if (changed) plot_->replot(QCustomPlot::rpQueuedReplot);
  });

  device_combo_ = new QComboBox(this);
  // Its items (long device labels) come after the first show, when the default
  // policy has sized it to nothing ("设备 0 ·"): it takes the row's free width.
  device_combo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  device_combo_->setMinimumContentsLength(8);
  device_combo_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  source_label_ = new QLabel(this);
  source_label_->setStyleSheet(QStringLiteral("QLabel { color: #555; }"));
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("By category for:"), this));
  controls->addWidget(device_combo_, 1);
  controls->addWidget(source_label_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(controls);
  layout->addWidget(plot_, 1);

  connect(device_combo_, &QComboBox::activated, this,
          [this](int index) { setSelectedDevice(index); });
  rebuild();
}

void MemoryView::setRunController(RunController* run) {
  run_ = run;
  connect(run_, &RunController::traceReset, this, &MemoryView::scheduleRebuild);
  connect(run_, &RunController::traceGrew, this, [this](int, int first_memory, int) {
    if (first_memory < static_cast<int>(run_->trace().memory.size())) scheduleRebuild();
  });
  connect(run_, &RunController::playbackMoved, this, [this] {
    if (shows_measured_) scheduleRebuild();
  });
  scheduleRebuild();  // what the run already holds
}

void MemoryView::setPrediction(std::shared_ptr<const Prediction> prediction) {
  prediction_ = std::move(prediction);
  if (!shows_measured_) scheduleRebuild();
}

void MemoryView::setSelectedDevice(int device) {
  selected_device_ = std::max(0, device);
  rebuild();
}

const Trace* MemoryView::currentTrace() const {
  if (run_ && !run_->trace().memory.empty()) return &run_->trace();
  if (prediction_) return &prediction_->result.trace;
  return nullptr;
}

int MemoryView::plottedPointCount() const {
  int points = 0;
  for (int i = 0; i < plot_->graphCount(); ++i)
    if (plot_->graph(i)->keyAxis() == totals_rect_->axis(QCPAxis::atBottom))
      points += plot_->graph(i)->dataCount();
  return points;
}

void MemoryView::scheduleRebuild() {
  // Many signals arrive per event-loop turn, and a long run's samples take a
  // while to sort through: redraw at most kMaxRefreshHz times a second, and
  // less often as the redraws grow longer (RefreshThrottle).
  if (rebuild_pending_) return;
  rebuild_pending_ = true;
  QTimer::singleShot(static_cast<int>(throttle_.remainingMs()), this, [this] {
    rebuild_pending_ = false;
    rebuild();
  });
}

void MemoryView::rebuild() {
  const RefreshThrottle::Timing timing(throttle_);
  plot_->clearGraphs();
  stacked_legend_->clearItems();
  const Trace* trace = currentTrace();
  shows_measured_ = trace && run_ && trace == &run_->trace();
  const double now =
      shows_measured_ ? run_->playbackTime() : std::numeric_limits<double>::infinity();
  QCPAxis* totals_x = totals_rect_->axis(QCPAxis::atBottom);
  QCPAxis* totals_y = totals_rect_->axis(QCPAxis::atLeft);
  QCPAxis* stacked_x = stacked_rect_->axis(QCPAxis::atBottom);
  QCPAxis* stacked_y = stacked_rect_->axis(QCPAxis::atLeft);
  peak_tracer_->setVisible(false);
  peak_label_->setVisible(false);
  shown_peak_bytes_ = 0;

  if (!trace || trace->memory.empty()) {
    source_label_->setText(tr("no memory samples yet"));
    device_combo_->clear();
    for (QCPAxis* axis : {totals_x, stacked_x, totals_y, stacked_y}) axis->setRange(0, 1);
    plot_->replot(QCustomPlot::rpQueuedReplot);
    return;
  }
  source_label_->setText(shows_measured_ ? tr("measured run") : tr("predicted (simulated)"));
  const TimeAxisUnit time_unit = time_axis_unit(*trace);
  const double time_scale = time_unit.scale;
  const QString time_label = time_unit.label;

  const int devices = device_count(*trace);
  // Relabelled when the devices' places change, not only their count (a plan
  // that turns 64 devices' 8 stages into 4 keeps the count).
  QStringList labels;
  for (int device = 0; device < devices; ++device) labels << device_row_label(*trace, device);
  bool same_labels = device_combo_->count() == devices;
  for (int device = 0; same_labels && device < devices; ++device)
    same_labels = device_combo_->itemText(device) == labels[device];
  if (!same_labels) {
    device_combo_->clear();
    device_combo_->addItems(labels);
  }
  selected_device_ = std::min(selected_device_, devices - 1);
  device_combo_->setCurrentIndex(selected_device_);

  // Samples by device, up to the playback clock.
  std::vector<std::vector<const MemorySample*>> by_device(static_cast<size_t>(devices));
  double max_total = 0;
  double last_time = 0;
  for (const MemorySample& sample : trace->memory) {
    if (sample.t > now || sample.device < 0 || sample.device >= devices) continue;
    by_device[static_cast<size_t>(sample.device)].push_back(&sample);
    max_total = std::max({max_total, double(total_bytes(sample.bytes)),
                          double(sample.bytes[static_cast<int>(MemoryCategory::Host)])});
    last_time = std::max(last_time, sample.t);
  }
  const auto earlier = [](const MemorySample* a, const MemorySample* b) { return a->t < b->t; };
  for (auto& samples : by_device) {
    if (!std::is_sorted(samples.begin(), samples.end(), earlier))
      std::stable_sort(samples.begin(), samples.end(), earlier);
  }
  // The peak is found on every sample; the curves draw a thinned copy.
  const MemorySample* peak = nullptr;
  for (const MemorySample* sample : by_device[static_cast<size_t>(selected_device_)])
    if (!peak || total_bytes(sample->bytes) > total_bytes(peak->bytes)) peak = sample;
  for (auto& samples : by_device) samples = thin_out(samples);
  const ByteUnit unit = byte_unit_for(max_total);
  // Curves hold their last value until the playback clock (or the last sample).
  const double end_time = std::isinf(now) ? last_time : now;

  for (int device = 0; device < devices; ++device) {
    const auto& samples = by_device[static_cast<size_t>(device)];
    QVector<double> keys;
    QVector<double> values;
    for (const MemorySample* sample : samples) {
      keys << sample->t * time_scale;
      values << total_bytes(sample->bytes) / unit.divisor;
    }
    if (!samples.empty() && samples.back()->t < end_time) {
      keys << end_time * time_scale;
      values << values.back();
    }
    QCPGraph* graph = plot_->addGraph(totals_x, totals_y);
    graph->setName(tr("device %1").arg(device));
    if (devices > kMaxDevicesInLegend) {
      if (device == selected_device_)
        graph->setName(tr("device %1 (of %2)").arg(device).arg(devices));
      else
        graph->removeFromLegend(plot_->legend);
    }
    graph->setPen(QPen(device_color(device), device == selected_device_ ? 2.5 : 1.5));
    if (device == selected_device_) graph->setLayer(QStringLiteral("selectedDevice"));
    graph->setLineStyle(QCPGraph::lsStepLeft);
    graph->setData(keys, values, true);
  }

  // The selected device, stacked by category: each graph is the running sum
  // up to its category and fills down to the one below.
  const auto& selected = by_device[static_cast<size_t>(selected_device_)];
  std::array<bool, kMemoryCategoryCount> used{};
  for (const MemorySample* sample : selected)
    for (int c = 0; c < kMemoryCategoryCount; ++c) used[c] = used[c] || sample->bytes[c] != 0;
  QCPGraph* below = nullptr;
  std::vector<double> running(selected.size(), 0.0);
  for (int c = 0; c < kMemoryCategoryCount; ++c) {
    if (!used[c]) continue;
    const auto category = static_cast<MemoryCategory>(c);
    // Host memory is not the device's: a line of its own, not part of the stack.
    const bool stacked = is_on_device(category);
    QVector<double> keys;
    QVector<double> values;
    for (size_t i = 0; i < selected.size(); ++i) {
      const double bytes = selected[i]->bytes[c] / unit.divisor;
      if (stacked) running[i] += bytes;
      keys << selected[i]->t * time_scale;
      values << (stacked ? running[i] : bytes);
    }
    if (!selected.empty() && selected.back()->t < end_time) {
      keys << end_time * time_scale;
      values << values.back();
    }
    QCPGraph* graph = plot_->addGraph(stacked_x, stacked_y);
    const QColor color = memory_category_color(category);
    graph->setLineStyle(QCPGraph::lsStepLeft);
    graph->setData(keys, values, true);
    graph->removeFromLegend(plot_->legend);
    graph->addToLegend(stacked_legend_);
    if (!stacked) {
      graph->setName(tr("host (off the device)"));
      graph->setPen(QPen(color, 2, Qt::DashLine));
      continue;
    }
    graph->setName(memory_category_title(category));
    QColor fill = color;
    fill.setAlpha(150);
    graph->setPen(QPen(color.darker(120), 1));
    graph->setBrush(fill);
    if (below) graph->setChannelFillGraph(below);
    below = graph;
  }

  // Peak of the selected device.
  if (peak) {
    shown_peak_bytes_ = total_bytes(peak->bytes);
    peak_tracer_->position->setCoords(peak->t * time_scale, shown_peak_bytes_ / unit.divisor);
    peak_label_->setText(tr("peak %1").arg(bytes_text(double(shown_peak_bytes_))));
    peak_tracer_->setVisible(true);
    peak_label_->setVisible(true);
  }

  totals_x->setLabel(time_label);
  stacked_x->setLabel(time_label);
  totals_y->setLabel(tr("total (%1)").arg(unit.name));
  stacked_y->setLabel(tr("device %1 (%2)").arg(selected_device_).arg(unit.name));
  const double x_end = std::max(end_time * time_scale, 1e-9);
  totals_x->setRange(0, x_end * 1.02);
  stacked_x->setRange(0, x_end * 1.02);
  const double y_top = std::max(max_total / unit.divisor * 1.25, 1e-9);
  totals_y->setRange(0, y_top);
  stacked_y->setRange(0, y_top);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace pipelab
