#include "ui/panels/compare_view.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <functional>

#include "core/trace/run_statistics.h"
#include "ui/models/run_store.h"
#include "ui/number_text.h"
#include "ui/panels/preset_note.h"
#include "ui/timeline/time_axis_unit.h"
#include "ui/timeline/timeline_chart.h"
#include "ui/timeline/timeline_plottable.h"

namespace pipelab {
namespace {

// Run A draws in blue, run B in orange, in every pane.
const QColor kRunColors[2] = {QColor(0x3b, 0x7d, 0xd8), QColor(0xe8, 0x68, 0x1a)};
const char* const kRunLetters[2] = {"A", "B"};

double latest_time(const Trace& trace) {
  double latest = 0;
  for (const TraceEvent& event : trace.events) latest = std::max(latest, event.t_end);
  for (const MemorySample& sample : trace.memory) latest = std::max(latest, sample.t);
  return latest;
}

// The stretch of a run the memory pane draws: the first step the statistics
// count (its memory shape is what GPipe and 1F1B differ in), or everything.
struct TimeWindow {
  double begin = 0;
  double end = 0;
};
TimeWindow memory_window(const Trace& trace, bool whole_run) {
  const int counted = std::isfinite(warmup_end_time(trace)) ? kWarmupSteps : 0;
  if (whole_run || static_cast<int>(trace.steps.size()) <= counted) return {0, latest_time(trace)};
  return {counted > 0 ? trace.steps[counted - 1].t_end : 0, trace.steps[counted].t_end};
}

QString run_title(int run, const RunRecord& record) {
  return QStringLiteral("%1 · %2").arg(QLatin1String(kRunLetters[run]),
                                       QString::fromStdString(record.name));
}

}  // namespace

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
  auto* bar = bar_ = new QHBoxLayout;
  for (int run = 0; run < 2; ++run) {
    run_combo_[run] = new QComboBox(this);
    run_combo_[run]->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    run_combo_[run]->setMinimumContentsLength(24);
    auto* swatch = new QLabel(tr("Run %1:").arg(QLatin1String(kRunLetters[run])), this);
    swatch->setStyleSheet(
        QStringLiteral("QLabel { color: %1; font-weight: bold; }").arg(kRunColors[run].name()));
    auto* save = new QPushButton(tr("Save…"), this);
    save->setToolTip(tr("Save this run to a file that Runs > Open a run… reopens"));
    connect(save, &QPushButton::clicked, this,
            [this, run] { emit saveRequested(run_combo_[run]->currentIndex()); });
    bar->addWidget(swatch);
    bar->addWidget(run_combo_[run]);
    bar->addWidget(save);
    bar->addSpacing(12);
    connect(run_combo_[run], &QComboBox::activated, this, [this] {
      setNote({}, {});  // the note was about the runs chosen before
      setRuns(runA(), runB());
    });
  }
  device_combo_ = new QComboBox(this);
  connect(device_combo_, &QComboBox::activated, this,
          [this](int index) { setMemoryDevice(index); });
  bar->addWidget(new QLabel(tr("Memory of:"), this));
  bar->addWidget(device_combo_);
  whole_run_check_ = new QCheckBox(tr("whole run"), this);
  whole_run_check_->setToolTip(
      tr("Off: one step (the first after warm-up), both runs from its start. On: the whole run."));
  connect(whole_run_check_, &QCheckBox::toggled, this, &CompareView::setMemoryOverWholeRun);
  bar->addWidget(whole_run_check_);
  bar->addStretch();
  auto* open = new QPushButton(tr("Open a run…"), this);
  connect(open, &QPushButton::clicked, this, &CompareView::openRequested);
  bar->addWidget(open);

  empty_label_ = new QLabel(
      tr("No runs yet. Run an experiment (Space), change it (say GPipe to 1F1B) and run it "
         "again: every run made since PipeLab started is kept here. Runs > Open a run… "
         "reopens a saved one."),
      this);
  empty_label_->setWordWrap(true);
  note_ = new PresetNote(this);

  // Loss and memory: one plot, two panes, one legend naming the runs.
  curves_ = new QCustomPlot(this);
  curves_->setObjectName(QStringLiteral("compareCurves"));
  curves_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  loss_rect_ = curves_->axisRect();
  memory_rect_ = new QCPAxisRect(curves_);
  curves_->plotLayout()->addElement(0, 1, memory_rect_);
  for (QCPAxisRect* rect : {loss_rect_, memory_rect_}) {
    rect->setRangeDrag(Qt::Horizontal);
    rect->setRangeZoom(Qt::Horizontal);
  }
  loss_rect_->axis(QCPAxis::atBottom)->setLabel(tr("training step"));
  loss_rect_->axis(QCPAxis::atLeft)->setLabel(tr("loss (training batch)"));
  memory_rect_->axis(QCPAxis::atLeft)->setLabel(tr("memory (MiB)"));
  curves_->legend->setVisible(true);
  curves_->legend->setFont(QFont(font().family(), 8));
  // Above the loss pane, in one line: inside the pane it hid a curve wherever
  // it sat (top right a short run's whole curve, bottom left a loss that fell
  // fast and stayed low).
  curves_->plotLayout()->insertRow(0);
  curves_->plotLayout()->addElement(0, 0, curves_->legend);
  curves_->plotLayout()->setRowStretchFactor(0, 0.001);
  curves_->legend->setFillOrder(QCPLegend::foColumnsFirst);
  curves_->legend->setBorderPen(Qt::NoPen);
  curves_->legend->setMargins(QMargins(4, 2, 4, 0));
  for (int run = 0; run < 2; ++run) {
    loss_[run] =
        curves_->addGraph(loss_rect_->axis(QCPAxis::atBottom), loss_rect_->axis(QCPAxis::atLeft));
    // B dashed: synchronous schedules train alike, and A must show through.
    const Qt::PenStyle style = run == 0 ? Qt::SolidLine : Qt::DashLine;
    loss_[run]->setPen(QPen(kRunColors[run], run == 0 ? 2.5 : 1.5, style));
    memory_[run] = curves_->addGraph(memory_rect_->axis(QCPAxis::atBottom),
                                     memory_rect_->axis(QCPAxis::atLeft));
    memory_[run]->setPen(QPen(kRunColors[run], 1.4));
    memory_[run]->setLineStyle(QCPGraph::lsStepLeft);
    memory_[run]->removeFromLegend();  // the loss entries name the runs already
  }

  table_ = new QTableWidget(0, 2, this);
  table_->setObjectName(QStringLiteral("compareStatistics"));
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table_->verticalHeader()->setDefaultSectionSize(20);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setToolTip(tr("Measured statistics; the first (warm-up) step is left out"));

  timeline_a_ = new TimelineChart(this);
  timeline_b_ = new TimelineChart(this);
  timeline_a_->setObjectName(QStringLiteral("compareTimelineA"));
  timeline_b_->setObjectName(QStringLiteral("compareTimelineB"));
  timeline_a_->setLegendShown(false);  // B's legend explains both
  // One time scale: moving either time axis moves the other.
  for (auto [from, to] :
       {std::pair{timeline_a_, timeline_b_}, std::pair{timeline_b_, timeline_a_}}) {
    TimelineChart* other = to;
    connect(from->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), to,
            [other](const QCPRange& range) {
              other->xAxis->setRange(range);
              other->replot(QCustomPlot::rpQueuedReplot);
            });
  }

  auto* top = new QSplitter(Qt::Horizontal, this);
  top->addWidget(curves_);
  top->addWidget(table_);
  top->setStretchFactor(0, 3);
  top->setStretchFactor(1, 2);
  auto* charts = new QSplitter(Qt::Vertical, this);
  charts->addWidget(top);
  charts->addWidget(timeline_a_);
  charts->addWidget(timeline_b_);
  charts->setChildrenCollapsible(false);
  charts->setSizes({300, 300, 300});

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(bar);
  layout->addWidget(note_);
  layout->addWidget(empty_label_);
  layout->addWidget(charts, 1);
  rebuild();
}

void CompareView::setExportAction(QAction* action) {
  auto* button = new QToolButton(this);
  button->setDefaultAction(action);
  button->setText(tr("Export…"));
  button->setToolTip(action->text().remove('&'));
  bar_->addWidget(button);
}

void CompareView::setRunStore(RunStore* store) {
  store_ = store;
  for (QComboBox* combo : run_combo_) combo->setModel(store_);
  connect(store_, &QAbstractItemModel::rowsInserted, this, &CompareView::onRunsInserted);
  setRuns(store_->count() >= 2 ? store_->count() - 2 : store_->count() - 1, store_->count() - 1);
}

void CompareView::setNote(const QString& title, const QString& text) {
  note_->showPreset(title, text);
}

QString CompareView::note() const { return note_->isHidden() ? QString() : note_->text(); }

void CompareView::onRunsInserted() {
  setNote({}, {});  // the note was about the runs compared before
  // The newest run against the one before it: the usual "changed one thing" comparison.
  const int newest = store_->count() - 1;
  setRuns(newest >= 1 ? newest - 1 : newest, newest >= 1 ? newest : -1);
}

void CompareView::setRuns(int row_a, int row_b) {
  const int rows[2] = {row_a, row_b};
  for (int run = 0; run < 2; ++run) {
    runs_[run] = store_ ? store_->run(rows[run]) : nullptr;
    run_combo_[run]->setCurrentIndex(runs_[run] ? rows[run] : -1);
  }
  rebuild();
}

int CompareView::runA() const { return runs_[0] ? run_combo_[0]->currentIndex() : -1; }

int CompareView::runB() const { return runs_[1] ? run_combo_[1]->currentIndex() : -1; }

void CompareView::setMemoryDevice(int device) {
  memory_device_ = std::max(0, device);
  device_combo_->setCurrentIndex(memory_device_);
  rebuildCurves();
}

void CompareView::setMemoryOverWholeRun(bool whole_run) {
  whole_run_check_->setChecked(whole_run);
  rebuildCurves();
}

void CompareView::rebuild() {
  empty_label_->setVisible(!runs_[0] && !runs_[1]);
  // The device chooser lists the devices of the larger run.
  int devices = 0;
  for (const auto& record : runs_)
    if (record) devices = std::max(devices, device_count(record->trace));
  device_combo_->clear();
  for (int device = 0; device < devices; ++device)
    device_combo_->addItem(tr("device %1").arg(device));
  memory_device_ = std::clamp(memory_device_, 0, std::max(0, devices - 1));
  device_combo_->setCurrentIndex(devices > 0 ? memory_device_ : -1);
  rebuildCurves();
  rebuildStatistics();
  rebuildTimelines();
}

void CompareView::rebuildCurves() {
  const bool whole_run = whole_run_check_->isChecked();
  TimeWindow windows[2];
  double longest = 0;
  for (int run = 0; run < 2; ++run) {
    if (!runs_[run]) continue;
    windows[run] = memory_window(runs_[run]->trace, whole_run);
    longest = std::max(longest, windows[run].end - windows[run].begin);
  }
  const TimeAxisUnit unit = time_axis_unit_for_seconds(longest);
  double top_loss = 0, top_memory = 0, last_step = 1;
  for (int run = 0; run < 2; ++run) {
    QVector<double> steps, losses, times, bytes;
    const std::shared_ptr<const RunRecord>& record = runs_[run];
    if (record) {
      for (const StepMetrics& metrics : record->trace.steps) {
        if (!std::isfinite(metrics.loss)) continue;
        steps << metrics.step + 1;  // "after step 1", as the training chart counts
        losses << metrics.loss;
        top_loss = std::max(top_loss, metrics.loss);
        last_step = std::max(last_step, double(metrics.step + 1));
      }
      // Each run from its window's start; the level held then starts the curve.
      const TimeWindow window = windows[run];
      double carried = 0;
      for (const MemorySample& sample : record->trace.memory) {
        if (sample.device != memory_device_ || sample.t > window.end) continue;
        const double mib = double(total_bytes(sample.bytes)) / (1024.0 * 1024.0);
        if (sample.t < window.begin) {
          carried = mib;
          continue;
        }
        if (times.isEmpty()) {
          times << 0;
          bytes << carried;
        }
        times << (sample.t - window.begin) * unit.scale;
        bytes << mib;
        top_memory = std::max(top_memory, mib);
      }
    }
    loss_[run]->setData(steps, losses, true);
    memory_[run]->setData(times, bytes, true);
    const QString name =
        record ? run_title(run, *record) : tr("%1 · no run").arg(QLatin1String(kRunLetters[run]));
    // Cut to about 44 characters: a long run name would spill the inset
    // legend over the curves (the full names are in the choosers above).
    const QFontMetrics metrics(curves_->legend->font());
    const QString shown = metrics.elidedText(name, Qt::ElideRight, 44 * metrics.averageCharWidth());
    loss_[run]->setName(shown);
    memory_[run]->setName(shown);
  }
  loss_rect_->axis(QCPAxis::atBottom)->setRange(0, last_step + 1);
  loss_rect_->axis(QCPAxis::atLeft)->setRange(0, top_loss > 0 ? top_loss * 1.1 : 1.0);
  const QString span = whole_run ? tr("whole run") : tr("the first step after warm-up");
  memory_rect_->axis(QCPAxis::atBottom)
      ->setLabel(tr("%1 · device %2 · %3").arg(unit.label).arg(memory_device_).arg(span));
  memory_rect_->axis(QCPAxis::atBottom)
      ->setRange(0, longest > 0 ? longest * unit.scale * 1.02 : 1.0);
  memory_rect_->axis(QCPAxis::atLeft)->setRange(0, top_memory > 0 ? top_memory * 1.1 : 1.0);
  curves_->replot(QCustomPlot::rpQueuedReplot);
}

void CompareView::rebuildStatistics() {
  RunStatistics stats[2];
  int devices = 0;
  QStringList headers;
  for (int run = 0; run < 2; ++run) {
    if (runs_[run]) {
      stats[run] = run_statistics(runs_[run]->trace);
      devices = std::max(devices, static_cast<int>(stats[run].peak_bytes_per_device.size()));
    }
    headers << tr("Run %1").arg(QLatin1String(kRunLetters[run]));
  }
  table_->setHorizontalHeaderLabels(headers);  // the names are in the choosers and the legend

  struct Row {
    QString name;
    std::function<QString(const RunRecord&, const RunStatistics&)> value;
  };
  std::vector<Row> rows = {
      {tr("Plan"),
       [](const RunRecord& record, const RunStatistics&) {
         const ParallelPlan& plan = record.experiment.parallel;
         return tr("%1 · dp %2 × tp %3 × pp %4 · m %5")
             .arg(QString::fromLatin1(schedule_name(plan.schedule)))
             .arg(plan.dp)
             .arg(plan.tp)
             .arg(plan.pp)
             .arg(plan.microbatches);
       }},
      {tr("Step time"),
       [](const RunRecord&, const RunStatistics& s) {
         return s.includes_warmup ? tr("%1 (warm-up only)").arg(duration_text(s.step_time_s))
                                  : tr("%1 (mean of steps %2–%3)")
                                        .arg(duration_text(s.step_time_s))
                                        .arg(kWarmupSteps + 1)
                                        .arg(kWarmupSteps + s.steps_counted);
       }},
      {tr("Samples/s"),
       [](const RunRecord&, const RunStatistics& s) { return count_text(s.samples_per_s); }},
      {tr("Bubble"),
       [](const RunRecord&, const RunStatistics& s) { return percent_text(s.bubble_fraction); }},
      {tr("Final loss"),
       [](const RunRecord&, const RunStatistics& s) {
         return std::isfinite(s.final_loss) ? QString::number(s.final_loss, 'f', 4)
                                            : QStringLiteral("—");
       }},
  };
  for (int device = 0; device < devices; ++device) {
    rows.push_back({tr("Peak memory, device %1").arg(device),
                    [device](const RunRecord&, const RunStatistics& s) {
                      return device < static_cast<int>(s.peak_bytes_per_device.size())
                                 ? bytes_text(double(s.peak_bytes_per_device[device]))
                                 : QStringLiteral("—");
                    }});
  }
  table_->setRowCount(static_cast<int>(rows.size()));
  for (int row = 0; row < static_cast<int>(rows.size()); ++row) {
    table_->setVerticalHeaderItem(row, new QTableWidgetItem(rows[row].name));
    for (int run = 0; run < 2; ++run) {
      const QString text =
          runs_[run] ? rows[row].value(*runs_[run], stats[run]) : QStringLiteral("—");
      auto* item = new QTableWidgetItem(text);
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table_->setItem(row, run, item);
    }
  }
}

QString CompareView::statisticsText() const {
  // Columns padded to their widest cell, so a monospace font lines them up.
  const int rows = table_->rowCount();
  int widths[3] = {0, 0, 0};
  auto cell = [this](int row, int column) -> QString {
    if (column == 0) return row < 0 ? QString() : table_->verticalHeaderItem(row)->text();
    const QTableWidgetItem* item =
        row < 0 ? table_->horizontalHeaderItem(column - 1) : table_->item(row, column - 1);
    return item ? item->text() : QString();
  };
  for (int row = -1; row < rows; ++row)
    for (int column = 0; column < 3; ++column)
      widths[column] = std::max(widths[column], static_cast<int>(cell(row, column).size()));
  QStringList lines;
  for (int run = 0; run < 2; ++run)
    if (runs_[run]) lines << tr("Run %1").arg(run_title(run, *runs_[run]));
  for (int row = -1; row < rows; ++row) {
    QString line = cell(row, 0).leftJustified(widths[0] + 3);
    line += cell(row, 1).leftJustified(widths[1] + 3) + cell(row, 2);
    while (line.endsWith(' ')) line.chop(1);  // the leading pad of the header row stays
    lines << line;
  }
  lines << tr("Statistics leave the first (warm-up) step out.");
  return lines.join('\n');
}

void CompareView::rebuildTimelines() {
  TimelineChart* charts[2] = {timeline_a_, timeline_b_};
  double shown_until = 0;  // the end of the first counted steps of the slower run
  for (int run = 0; run < 2; ++run) {
    const std::shared_ptr<const RunRecord>& record = runs_[run];
    TimelineChart* chart = charts[run];
    if (!record) {
      chart->showTrace(Trace{});
      chart->setWarmupEnd(std::nan(""));
      chart->setTitle(tr("%1 · no run chosen").arg(QLatin1String(kRunLetters[run])));
      continue;
    }
    const Trace& trace = record->trace;
    chart->showTrace(trace, kMeasuredBubbleMinSeconds);
    chart->setWarmupEnd(warmup_end_time(trace));
    const RunStatistics stats = run_statistics(trace);
    chart->setTitle(tr("%1: step %2 · bubble %3")
                        .arg(run_title(run, *record), duration_text(stats.step_time_s),
                             percent_text(stats.bubble_fraction)));
    // Warm-up and two steps after it show each op; a double-click shows everything.
    const size_t last = std::min<size_t>(kWarmupSteps + 2, trace.steps.size());
    shown_until =
        std::max(shown_until, last > 0 ? trace.steps[last - 1].t_end : latest_time(trace));
  }
  // Both on one time unit and range, so equal lengths look equal.
  const TimeAxisUnit unit = sharedTimeUnit();
  for (TimelineChart* chart : charts) chart->setTimeUnit(unit);
  const double end = shown_until > 0 ? shown_until * 1.01 : 1e-3;
  timeline_a_->showTimeRange(0, end);
  timeline_b_->showTimeRange(0, end);
  for (TimelineChart* chart : charts) chart->replot(QCustomPlot::rpQueuedReplot);
}

TimeAxisUnit CompareView::sharedTimeUnit() const {
  const RunRecord* longer = nullptr;
  for (const auto& record : runs_)
    if (record && (!longer || latest_time(record->trace) > latest_time(longer->trace)))
      longer = record.get();
  return time_axis_unit(longer ? longer->trace : Trace{});
}

QList<QCustomPlot*> CompareView::charts() const { return {curves_, timeline_a_, timeline_b_}; }

}  // namespace pipelab
