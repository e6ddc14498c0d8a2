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
#include <vector>

#include "core/trace/run_statistics.h"
#include "ui/models/run_series_controller.h"  // kMaxComparedRuns
#include "ui/models/run_store.h"
#include "ui/number_text.h"
#include "ui/panels/memory_view.h"  // memory_category_title
#include "ui/panels/preset_note.h"
#include "ui/timeline/time_axis_unit.h"
#include "ui/timeline/timeline_chart.h"
#include "ui/timeline/timeline_plottable.h"

namespace pipelab {
namespace {

static_assert(kMaxComparedRuns == 4, "CompareView has four slots");

// Run A draws in blue, B in orange, C in green, D in purple, in every pane.
const QColor kRunColors[kMaxComparedRuns] = {QColor(0x3b, 0x7d, 0xd8), QColor(0xe8, 0x68, 0x1a),
                                             QColor(0x2e, 0x9e, 0x44), QColor(0x8e, 0x44, 0xad)};
const char* const kRunLetters[kMaxComparedRuns] = {"A", "B", "C", "D"};
// A solid and thick; the others dashed, dotted, dash-dotted and thinner:
// synchronous schedules train alike, and every curve must show through.
const Qt::PenStyle kLossStyles[kMaxComparedRuns] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine,
                                                    Qt::DashDotLine};

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
  for (int run = 0; run < kMaxComparedRuns; ++run) {
    Slot& slot = slots_[run];
    slot.open = run < 2;
    slot.chooser = new QWidget(this);
    auto* chooser = new QHBoxLayout(slot.chooser);
    chooser->setContentsMargins(0, 0, 8, 0);
    slot.combo = new QComboBox(slot.chooser);
    slot.combo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    slot.combo->setMinimumContentsLength(run < 2 ? 24 : 16);
    auto* swatch = new QLabel(tr("Run %1:").arg(QLatin1String(kRunLetters[run])), slot.chooser);
    swatch->setStyleSheet(
        QStringLiteral("QLabel { color: %1; font-weight: bold; }").arg(kRunColors[run].name()));
    auto* save = new QPushButton(tr("Save…"), slot.chooser);
    save->setToolTip(tr("Save this run to a file that Runs > Open a run… reopens"));
    connect(save, &QPushButton::clicked, this,
            [this, run] { emit saveRequested(slots_[run].combo->currentIndex()); });
    chooser->addWidget(swatch);
    chooser->addWidget(slot.combo);
    chooser->addWidget(save);
    if (run >= 2) {  // C and D can be closed again
      auto* close = new QToolButton(slot.chooser);
      close->setText(QStringLiteral("×"));
      close->setToolTip(tr("Stop comparing run %1").arg(QLatin1String(kRunLetters[run])));
      connect(close, &QToolButton::clicked, this, [this, run] { closeSlot(run); });
      chooser->addWidget(close);
    }
    bar->addWidget(slot.chooser);
    connect(slot.combo, &QComboBox::activated, this, [this] {
      setNote({}, {});  // the note was about the runs chosen before
      setRuns(runs());
    });
  }
  add_button_ = new QPushButton(tr("Add run"), this);
  add_button_->setToolTip(tr("Compare one more run (up to %1)").arg(kMaxComparedRuns));
  connect(add_button_, &QPushButton::clicked, this, [this] { addRun(); });
  bar->addWidget(add_button_);
  bar->addSpacing(12);
  device_combo_ = new QComboBox(this);
  connect(device_combo_, &QComboBox::activated, this,
          [this](int index) { setMemoryDevice(index); });
  bar->addWidget(new QLabel(tr("Memory of:"), this));
  bar->addWidget(device_combo_);
  category_combo_ = new QComboBox(this);
  category_combo_->setToolTip(
      tr("The device's total, or one category of it: where the memory goes"));
  category_combo_->addItem(tr("total"));
  for (int category = 0; category < kMemoryCategoryCount; ++category)
    category_combo_->addItem(memory_category_title(static_cast<MemoryCategory>(category)));
  connect(category_combo_, &QComboBox::activated, this, [this] { rebuildCurves(); });
  bar->addWidget(category_combo_);
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
  // Two runs to a line: four long names in one line would widen the loss
  // pane's column and squeeze the memory pane beside it.
  curves_->legend->setWrap(2);
  curves_->legend->setFillOrder(QCPLegend::foColumnsFirst);
  curves_->legend->setBorderPen(Qt::NoPen);
  curves_->legend->setMargins(QMargins(4, 2, 4, 0));
  for (int run = 0; run < kMaxComparedRuns; ++run) {
    Slot& slot = slots_[run];
    slot.loss =
        curves_->addGraph(loss_rect_->axis(QCPAxis::atBottom), loss_rect_->axis(QCPAxis::atLeft));
    slot.loss->setPen(QPen(kRunColors[run], run == 0 ? 2.5 : 1.5, kLossStyles[run]));
    slot.memory = curves_->addGraph(memory_rect_->axis(QCPAxis::atBottom),
                                    memory_rect_->axis(QCPAxis::atLeft));
    slot.memory->setPen(QPen(kRunColors[run], 1.4));
    slot.memory->setLineStyle(QCPGraph::lsStepLeft);
    slot.memory->removeFromLegend();  // the loss entries name the runs already
  }

  table_ = new QTableWidget(0, 2, this);
  table_->setObjectName(QStringLiteral("compareStatistics"));
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table_->verticalHeader()->setDefaultSectionSize(20);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setToolTip(tr("Measured statistics; the first (warm-up) step is left out"));

  for (int run = 0; run < kMaxComparedRuns; ++run) {
    slots_[run].timeline = new TimelineChart(this);
    slots_[run].timeline->setObjectName(
        QStringLiteral("compareTimeline%1").arg(QLatin1String(kRunLetters[run])));
  }
  // One time scale: moving any time axis moves the others (setRange does
  // not signal a range it already has, so the echo stops there).
  for (Slot& from : slots_)
    for (Slot& to : slots_) {
      if (&from == &to) continue;
      TimelineChart* other = to.timeline;
      connect(from.timeline->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), other,
              [other](const QCPRange& range) {
                other->xAxis->setRange(range);
                other->replot(QCustomPlot::rpQueuedReplot);
              });
    }

  auto* top = top_ = new QSplitter(Qt::Horizontal, this);
  top->addWidget(curves_);
  top->addWidget(table_);
  top->setStretchFactor(0, 3);
  top->setStretchFactor(1, 2);
  auto* charts = new QSplitter(Qt::Vertical, this);
  charts->addWidget(top);
  for (Slot& slot : slots_) charts->addWidget(slot.timeline);
  charts->setChildrenCollapsible(false);
  charts->setSizes({300, 300, 300, 300, 300});

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
  for (Slot& slot : slots_) slot.combo->setModel(store_);
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

void CompareView::setRuns(const QList<int>& rows) {
  for (int run = 0; run < kMaxComparedRuns; ++run) {
    Slot& slot = slots_[run];
    const int row = run < rows.size() ? rows[run] : -1;
    slot.open = run < 2 || run < rows.size();
    slot.record = store_ && slot.open ? store_->run(row) : nullptr;
    slot.combo->setCurrentIndex(slot.record ? row : -1);
  }
  rebuild();
}

QList<int> CompareView::openSlots() const {
  QList<int> open;
  for (int run = 0; run < kMaxComparedRuns; ++run)
    if (slots_[run].open) open << run;
  return open;
}

QList<int> CompareView::runs() const {
  QList<int> rows;
  for (int run : openSlots()) rows << this->run(run);
  return rows;
}

int CompareView::run(int slot) const {
  if (slot < 0 || slot >= kMaxComparedRuns || !slots_[slot].record) return -1;
  return slots_[slot].combo->currentIndex();
}

bool CompareView::addRun() {
  const QList<int> open = openSlots();
  if (open.size() >= kMaxComparedRuns) return false;
  QList<int> rows = runs();
  // The newest run not compared yet, else the newest.
  int newest = store_ ? store_->count() - 1 : -1;
  for (int row = newest; row >= 0; --row)
    if (!rows.contains(row)) {
      newest = row;
      break;
    }
  rows << newest;
  setNote({}, {});
  setRuns(rows);
  return true;
}

void CompareView::closeSlot(int slot) {
  QList<int> rows = runs();
  if (slot < 2 || slot >= rows.size()) return;
  rows.removeAt(slot);  // the later slots move up a letter
  setNote({}, {});
  setRuns(rows);
}

void CompareView::setMemoryDevice(int device) {
  memory_device_ = std::max(0, device);
  device_combo_->setCurrentIndex(memory_device_);
  rebuildCurves();
}

void CompareView::setMemoryCategory(std::optional<MemoryCategory> category) {
  category_combo_->setCurrentIndex(category ? static_cast<int>(*category) + 1 : 0);
  rebuildCurves();
}

void CompareView::setMemoryOverWholeRun(bool whole_run) {
  whole_run_check_->setChecked(whole_run);
  rebuildCurves();
}

void CompareView::rebuild() {
  bool any = false;
  for (const Slot& slot : slots_) {
    slot.chooser->setVisible(slot.open);
    slot.timeline->setVisible(slot.open);
    any = any || slot.record;
  }
  add_button_->setEnabled(openSlots().size() < kMaxComparedRuns);
  empty_label_->setVisible(!any);
  // The device chooser lists the devices of the largest run.
  int devices = 0;
  for (const Slot& slot : slots_)
    if (slot.record) devices = std::max(devices, device_count(slot.record->trace));
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
  TimeWindow windows[kMaxComparedRuns];
  double longest = 0;
  for (int run = 0; run < kMaxComparedRuns; ++run) {
    if (!slots_[run].record) continue;
    windows[run] = memory_window(slots_[run].record->trace, whole_run);
    longest = std::max(longest, windows[run].end - windows[run].begin);
  }
  const TimeAxisUnit unit = time_axis_unit_for_seconds(longest);
  const int category = category_combo_->currentIndex() - 1;  // -1: the total
  const auto held = [category](const MemorySample& sample) {
    return category < 0 ? total_bytes(sample.bytes) : sample.bytes[category];
  };
  double top_loss = 0, top_memory = 0, last_step = 1;
  for (int run = 0; run < kMaxComparedRuns; ++run) {
    QVector<double> steps, losses, times, bytes;
    Slot& slot = slots_[run];
    const std::shared_ptr<const RunRecord>& record = slot.record;
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
        const double mib = double(held(sample)) / (1024.0 * 1024.0);
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
    slot.loss->setData(steps, losses, true);
    slot.memory->setData(times, bytes, true);
    // A closed slot leaves the legend; an open one without a run says so there.
    if (!slot.open) {
      slot.loss->removeFromLegend();
      continue;
    }
    slot.loss->addToLegend();
    const QString name =
        record ? run_title(run, *record) : tr("%1 · no run").arg(QLatin1String(kRunLetters[run]));
    // Cut to about 44 characters: a long run name would spill the inset
    // legend over the curves (the full names are in the choosers above).
    const QFontMetrics metrics(curves_->legend->font());
    const QString shown = metrics.elidedText(name, Qt::ElideRight, 44 * metrics.averageCharWidth());
    slot.loss->setName(shown);
    slot.memory->setName(shown);
  }
  loss_rect_->axis(QCPAxis::atBottom)->setRange(0, last_step + 1);
  loss_rect_->axis(QCPAxis::atLeft)->setRange(0, top_loss > 0 ? top_loss * 1.1 : 1.0);
  const QString span = whole_run ? tr("whole run") : tr("the first step after warm-up");
  memory_rect_->axis(QCPAxis::atBottom)
      ->setLabel(tr("%1 · device %2 · %3").arg(unit.label).arg(memory_device_).arg(span));
  memory_rect_->axis(QCPAxis::atLeft)
      ->setLabel(category < 0 ? tr("memory (MiB)")
                              : tr("%1 (MiB)").arg(category_combo_->currentText()));
  memory_rect_->axis(QCPAxis::atBottom)
      ->setRange(0, longest > 0 ? longest * unit.scale * 1.02 : 1.0);
  memory_rect_->axis(QCPAxis::atLeft)->setRange(0, top_memory > 0 ? top_memory * 1.1 : 1.0);
  curves_->replot(QCustomPlot::rpQueuedReplot);
}

void CompareView::rebuildStatistics() {
  const QList<int> open = openSlots();
  RunStatistics stats[kMaxComparedRuns];
  int devices = 0;
  QStringList headers;
  for (int run : open) {
    if (slots_[run].record) {
      stats[run] = run_statistics(slots_[run].record->trace);
      devices = std::max(devices, static_cast<int>(stats[run].peak_bytes_per_device.size()));
    }
    headers << tr("Run %1").arg(QLatin1String(kRunLetters[run]));
  }
  if (table_->columnCount() != open.size()) {
    // Each run's column as wide as the two-run table's were: the table
    // takes a larger share of the top row for more runs.
    table_->setColumnCount(static_cast<int>(open.size()));
    const int total = std::max(top_->width(), 1000);
    const int runs = static_cast<int>(open.size());
    top_->setSizes({total * 6 / (7 + runs), total * (1 + runs) / (7 + runs)});
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
    for (int column = 0; column < open.size(); ++column) {
      const int run = open[column];
      const Slot& slot = slots_[run];
      const QString text =
          slot.record ? rows[row].value(*slot.record, stats[run]) : QStringLiteral("—");
      auto* item = new QTableWidgetItem(text);
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table_->setItem(row, column, item);
    }
  }
}

QString CompareView::statisticsText() const {
  // Columns padded to their widest cell, so a monospace font lines them up.
  const int rows = table_->rowCount();
  const int columns = table_->columnCount() + 1;  // the row names, then one per run
  std::vector<int> widths(static_cast<size_t>(columns), 0);
  auto cell = [this](int row, int column) -> QString {
    if (column == 0) return row < 0 ? QString() : table_->verticalHeaderItem(row)->text();
    const QTableWidgetItem* item =
        row < 0 ? table_->horizontalHeaderItem(column - 1) : table_->item(row, column - 1);
    return item ? item->text() : QString();
  };
  for (int row = -1; row < rows; ++row)
    for (int column = 0; column < columns; ++column)
      widths[column] = std::max(widths[column], static_cast<int>(cell(row, column).size()));
  QStringList lines;
  for (int run : openSlots())
    if (slots_[run].record) lines << tr("Run %1").arg(run_title(run, *slots_[run].record));
  for (int row = -1; row < rows; ++row) {
    QString line;
    for (int column = 0; column < columns; ++column)
      line += cell(row, column).leftJustified(widths[column] + 3);
    while (line.endsWith(' ')) line.chop(1);  // the leading pad of the header row stays
    lines << line;
  }
  lines << tr("Statistics leave the first (warm-up) step out.");
  return lines.join('\n');
}

void CompareView::rebuildTimelines() {
  double shown_until = 0;  // the end of the first counted steps of the slowest run
  const QList<int> open = openSlots();
  for (int run = 0; run < kMaxComparedRuns; ++run) {
    const Slot& slot = slots_[run];
    TimelineChart* chart = slot.timeline;
    // Only the last open timeline draws the legend, which explains them all.
    chart->setLegendShown(!open.isEmpty() && run == open.back());
    if (!slot.record) {
      chart->showTrace(Trace{});
      chart->setWarmupEnd(std::nan(""));
      chart->setTitle(tr("%1 · no run chosen").arg(QLatin1String(kRunLetters[run])));
      continue;
    }
    const Trace& trace = slot.record->trace;
    chart->showTrace(trace, kMeasuredBubbleMinSeconds);
    chart->setWarmupEnd(warmup_end_time(trace));
    const RunStatistics stats = run_statistics(trace);
    chart->setTitle(tr("%1: step %2 · bubble %3")
                        .arg(run_title(run, *slot.record), duration_text(stats.step_time_s),
                             percent_text(stats.bubble_fraction)));
    // Warm-up and two steps after it show each op; a double-click shows everything.
    const size_t last = std::min<size_t>(kWarmupSteps + 2, trace.steps.size());
    shown_until =
        std::max(shown_until, last > 0 ? trace.steps[last - 1].t_end : latest_time(trace));
  }
  // All on one time unit and range, so equal lengths look equal.
  const TimeAxisUnit unit = sharedTimeUnit();
  const double end = shown_until > 0 ? shown_until * 1.01 : 1e-3;
  for (Slot& slot : slots_) {
    slot.timeline->setTimeUnit(unit);
    slot.timeline->showTimeRange(0, end);
    slot.timeline->replot(QCustomPlot::rpQueuedReplot);
  }
}

TimeAxisUnit CompareView::sharedTimeUnit() const {
  const RunRecord* longer = nullptr;
  for (const Slot& slot : slots_)
    if (slot.record && (!longer || latest_time(slot.record->trace) > latest_time(longer->trace)))
      longer = slot.record.get();
  return time_axis_unit(longer ? longer->trace : Trace{});
}

QList<QCustomPlot*> CompareView::charts() const {
  QList<QCustomPlot*> charts{curves_};
  for (int run : openSlots()) charts << slots_[run].timeline;
  return charts;
}

}  // namespace pipelab
