#include "ui/panels/split_search_dialog.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"
#include "core/planner/plan_proposal.h"
#include "core/text/byte_size.h"
#include "ui/core_message_text.h"
#include "ui/panels/memory_view.h"

namespace pipelab {
namespace {

constexpr int kMaxDialogDevices = 1 << 16;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kPickRadiusPx = 12;

enum Graph { Estimated, Simulated, Front, Chosen, kGraphCount };

// The experiment's cluster, or none where it names none that resolves.
std::optional<ClusterSpec> cluster_of(const Experiment& experiment) {
  try {
    return experiment_cluster(experiment);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

QString step_text(double seconds) { return QString::fromStdString(step_time_text(seconds)); }

QString bytes_text(double bytes) {
  return QString::fromStdString(byte_size_text(static_cast<int64_t>(std::llround(bytes))));
}

QString percent(double share) { return QString::fromStdString(percent_text(share)); }

}  // namespace

QString SplitSearchDialog::whyText(const PrunedPlan& pruned) {
  const auto over = [&] {
    return tr("%1 over the %2 usable")
        .arg(bytes_text(static_cast<double>(pruned.bytes - pruned.usable_bytes)))
        .arg(bytes_text(static_cast<double>(pruned.usable_bytes)));
  };
  switch (pruned.detail) {
    case PruneDetail::Problem:
      return core_message_text(QString::fromStdString(pruned.problem));
    case PruneDetail::MemoryBound:
      return tr("needs at least %1 per device (model states and one micro-batch's activations), %2")
          .arg(bytes_text(static_cast<double>(pruned.bytes)))
          .arg(over());
    case PruneDetail::MemoryPeak:
      return tr("the simulator predicts a peak of %1, %2")
          .arg(bytes_text(static_cast<double>(pruned.bytes)))
          .arg(over());
    case PruneDetail::SimulatedSlower:
      return tr("simulated at %1, behind %2 faster plans")
          .arg(step_text(pruned.step_s))
          .arg(pruned.faster_plans);
    case PruneDetail::BoundSlower:
      return tr("its step takes at least %1, %2 more than plan %3's %4")
          .arg(step_text(pruned.step_s))
          .arg(percent(pruned.step_s / pruned.reference_step_s - 1))
          .arg(pruned.reference_rank)
          .arg(step_text(pruned.reference_step_s));
    case PruneDetail::Estimated: {
      QString estimate = tr("estimated at %1 (at least %2)")
                             .arg(step_text(pruned.step_s))
                             .arg(step_text(pruned.bound_s));
      if (pruned.bytes > pruned.usable_bytes)
        estimate = tr("%1 and %2, %3 over the usable memory")
                       .arg(estimate)
                       .arg(bytes_text(static_cast<double>(pruned.bytes)))
                       .arg(bytes_text(static_cast<double>(pruned.bytes - pruned.usable_bytes)));
      else if (pruned.reference_rank > 0)
        estimate = (pruned.step_s >= pruned.reference_step_s
                        ? tr("%1, %2 more than plan %3's simulated %4")
                        : tr("%1, %2 less than plan %3's simulated %4"))
                       .arg(estimate)
                       .arg(percent(std::abs(pruned.step_s / pruned.reference_step_s - 1)))
                       .arg(pruned.reference_rank)
                       .arg(step_text(pruned.reference_step_s));
      return tr("%1; the search simulates %2 candidates in the order of their estimates "
                "(--max-simulations)")
          .arg(estimate)
          .arg(pruned.max_simulations);
    }
  }
  return QString::fromStdString(pruned.why);
}

SplitSearchDialog::SplitSearchDialog(const Experiment& experiment, QWidget* parent)
    : QDialog(parent), experiment_(experiment) {
  setWindowTitle(tr("Search every split"));
  resize(980, 680);

  devices_spin_ = new QSpinBox(this);
  devices_spin_->setRange(1, kMaxDialogDevices);
  // Start from the experiment's cluster: all its nodes' devices (or the split's own), their memory.
  const std::optional<ClusterSpec> cluster = cluster_of(experiment);
  if (cluster) devices_per_node_ = cluster->node.devices_per_node;
  devices_spin_->setValue(cluster && experiment.simulation.cluster.nodes > 0
                              ? cluster->devices()
                              : std::max(experiment.parallel.devices(), 1));
  devices_spin_->setToolTip(tr("Every plan uses all of these devices"));
  memory_edit_ = new QLineEdit(
      QString::fromStdString(byte_size_text(
          cluster ? static_cast<int64_t>(cluster->device.memory_bytes) : int64_t{80'000'000'000})),
      this);
  memory_edit_->setToolTip(tr("e.g. 16GiB, 80GB or a number of bytes"));
  margin_spin_ = new QSpinBox(this);
  margin_spin_->setRange(0, 90);
  margin_spin_->setValue(10);
  margin_spin_->setSuffix(QStringLiteral(" %"));
  margin_spin_->setToolTip(
      tr("Memory kept free on each device: a plan fits when its peak stays below the rest"));
  search_button_ = new QPushButton(tr("Search"), this);
  connect(search_button_, &QPushButton::clicked, this,
          [this] { isSearching() ? stop() : search(); });
  status_label_ =
      new QLabel(tr("Search tries every tp, cp, pp, dp, ZeRO stage, schedule, recompute "
                    "policy and micro-batch count on the devices given."),
                 this);
  status_label_->setWordWrap(true);

  auto* form = new QHBoxLayout;
  auto* fields = new QFormLayout;
  fields->addRow(tr("Devices"), devices_spin_);
  fields->addRow(tr("Memory per device"), memory_edit_);
  fields->addRow(tr("Keep free"), margin_spin_);
  form->addLayout(fields);
  form->addWidget(search_button_, 0, Qt::AlignBottom);
  form->addWidget(status_label_, 1);

  auto* filter_row = new QHBoxLayout;
  filter_row->addWidget(new QLabel(tr("Show only:"), this));
  for (int d = 0; d < SplitSearchModel::kDimensionCount; ++d) {
    const auto dimension = static_cast<SplitSearchModel::Dimension>(d);
    auto* combo = new QComboBox(this);
    combo->setToolTip(tr("Show only the candidates with this %1")
                          .arg(SplitSearchModel::dimensionName(dimension)));
    connect(combo, &QComboBox::currentIndexChanged, this, [this, dimension, combo] {
      model_.setFilter(dimension, combo->currentData().toString());
      redraw();
    });
    filters_[d] = combo;
    filter_row->addWidget(new QLabel(SplitSearchModel::dimensionName(dimension), this));
    filter_row->addWidget(combo);
  }
  filter_row->addStretch(1);

  plot_ = new QCustomPlot(this);
  plot_->setMinimumHeight(380);
  plot_->xAxis->setLabel(tr("memory per device (GiB)"));
  plot_->yAxis->setLabel(tr("throughput (samples per second)"));
  plot_->legend->setVisible(true);
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  const struct {
    const char* name;
    QColor color;
    QCPScatterStyle::ScatterShape shape;
    double size;
  } graphs[kGraphCount] = {
      {QT_TR_NOOP("estimated"), QColor(0xb0, 0xb8, 0xc4), QCPScatterStyle::ssCircle, 4},
      {QT_TR_NOOP("simulated"), QColor(0x1f, 0x6f, 0xc5), QCPScatterStyle::ssDisc, 7},
      {QT_TR_NOOP("Pareto front of the simulated plans that fit"), QColor(0x1a, 0x9e, 0x4b),
       QCPScatterStyle::ssDiamond, 9},
      {QT_TR_NOOP("chosen"), QColor(0x20, 0x20, 0x20), QCPScatterStyle::ssCircle, 16},
  };
  for (const auto& graph : graphs) {
    QCPGraph* g = plot_->addGraph();
    g->setName(tr(graph.name));
    g->setLineStyle(&graph == &graphs[Front] ? QCPGraph::lsStepLeft : QCPGraph::lsNone);
    g->setPen(QPen(graph.color, 1.5));
    g->setScatterStyle(QCPScatterStyle(
        graph.shape, QPen(graph.color, 1.5),
        &graph == &graphs[Chosen] ? QBrush(Qt::NoBrush) : QBrush(graph.color), graph.size));
  }
  plot_->graph(Chosen)->removeFromLegend();
  // Memory spans orders of magnitude (a small plan's GiB to a whole model's TiB): a log axis.
  plot_->xAxis->setScaleType(QCPAxis::stLogarithmic);
  plot_->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  over_memory_ = new QCPItemRect(plot_);
  over_memory_->setPen(Qt::NoPen);
  over_memory_->setBrush(QColor(0xd0, 0x30, 0x30, 28));
  over_memory_->setLayer(QStringLiteral("background"));
  usable_line_ = new QCPItemStraightLine(plot_);
  usable_line_->setPen(QPen(QColor(0xd0, 0x30, 0x30), 1.5, Qt::DashLine));
  connect(plot_, &QCustomPlot::mousePress, this,
          [this](QMouseEvent* event) { pickAt(event->position()); });

  details_label_ = new QLabel(tr("Click a point to see its split."), this);
  details_label_->setWordWrap(true);
  details_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  load_button_ = new QPushButton(tr("Load into experiment"), this);
  load_button_->setEnabled(false);
  load_button_->setToolTip(
      tr("Replace the experiment's parallel settings with this split (Plan > Undo plan puts them "
         "back)"));
  connect(load_button_, &QPushButton::clicked, this, [this] {
    if (!selected_) return;
    const SearchedPlan& chosen = model_.candidates()[*selected_];
    emit splitChosen(chosen.plan, tr("split search: %1, %2 step %3")
                                      .arg(QString::fromStdString(split_label(chosen.plan)))
                                      .arg(chosen.simulated ? tr("simulated") : tr("estimated"))
                                      .arg(step_text(chosen.simulated ? chosen.step_s
                                                                      : chosen.step_estimate_s)));
  });
  export_button_ = new QPushButton(tr("Export launch"), this);
  export_button_->setEnabled(false);
  export_button_->setToolTip(
      tr("This split as Megatron-LM flags or a torchtitan job section, copied to the "
         "clipboard"));
  auto* export_menu = new QMenu(export_button_);
  export_menu->addAction(tr("Megatron-LM flags"), this,
                         [this] { exportLaunch(LaunchTool::Megatron); });
  export_menu->addAction(tr("torchtitan job section"), this,
                         [this] { exportLaunch(LaunchTool::Torchtitan); });
  export_button_->setMenu(export_menu);
  best_table_ = new QTableWidget(0, 6, this);
  best_table_->setHorizontalHeaderLabels(
      {tr("#"), tr("split"), tr("step"), tr("MFU"), tr("bubble"), tr("peak per device")});
  best_table_->verticalHeader()->setVisible(false);
  best_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  best_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  best_table_->setSelectionMode(QAbstractItemView::SingleSelection);
  best_table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
  best_table_->setMaximumHeight(170);
  best_table_->setToolTip(tr("The search's best plans, simulated, fastest first"));
  connect(best_table_, &QTableWidget::itemSelectionChanged, this, [this] {
    const QList<QTableWidgetItem*> items = best_table_->selectedItems();
    if (items.isEmpty()) return;
    const int candidate = model_.candidateOfRank(best_table_->row(items.front()) + 1);
    if (candidate >= 0 && selected_ != candidate) selectCandidate(candidate);
  });
  auto* buttons = new QVBoxLayout;
  buttons->addWidget(load_button_);
  buttons->addWidget(export_button_);
  buttons->addStretch(1);
  auto* bottom = new QHBoxLayout;
  bottom->addWidget(details_label_, 1);
  bottom->addLayout(buttons);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(filter_row);
  layout->addWidget(plot_, 1);
  layout->addWidget(best_table_);
  layout->addLayout(bottom);
  refreshFilters();
  redraw();
}

SplitSearchDialog::~SplitSearchDialog() { stop(); }

void SplitSearchDialog::stop() { stop_requested_->store(true); }

void SplitSearchDialog::search() {
  if (job_.isRunning()) return;
  const std::optional<int64_t> memory =
      parse_byte_size(memory_edit_->text().trimmed().toStdString());
  if (!memory || *memory <= 0) {
    status_label_->setText(tr("Memory per device must be a size above 0, e.g. 80GB or 16GiB."));
    return;
  }
  SearchRequest request;
  request.devices = devices_spin_->value();
  request.memory_per_device = *memory;
  request.memory_margin = margin_spin_->value() / 100.0;
  request.devices_per_node = devices_per_node_;
  stop_requested_ = std::make_shared<std::atomic<bool>>(false);
  request.on_progress = [stop = stop_requested_](const SearchProgress&) { return !stop->load(); };
  const Experiment experiment = experiment_;
  job_.start([experiment, request]() -> Outcome {
    try {
      const std::vector<std::string> problems = validate_experiment(experiment);
      if (!problems.empty()) return "fix the experiment first: " + problems.front();
      return search_splits(experiment, request);
    } catch (const std::exception& error) {
      return std::string(error.what());
    }
  });
  search_button_->setText(tr("Stop"));
  status_label_->setText(tr("Searching…"));
}

void SplitSearchDialog::onSearched() {
  std::optional<Outcome> outcome = job_.take();
  search_button_->setText(tr("Search"));
  if (!outcome) return;
  selected_.reset();
  if (const std::string* reason = std::get_if<std::string>(&*outcome)) {
    model_.clear();
    status_label_->setText(tr("No search: %1").arg(QString::fromStdString(*reason)));
    refreshFilters();
    fillBestTable();
    redraw();
    emit searchFinished(false);
    return;
  }
  model_.setResult(std::move(std::get<SearchResult>(*outcome)), experiment_.training.batch_size);
  const SearchResult& result = model_.result();
  status_label_->setText(
      tr("%1 candidates: %2 pruned as invalid, %3 points (%4 simulated). %5 usable per device.")
          .arg(result.candidates)
          .arg(result.candidates - static_cast<int64_t>(result.considered.size()))
          .arg(result.considered.size())
          .arg(result.simulated)
          .arg(bytes_text(static_cast<double>(result.usable_bytes))));
  refreshFilters();
  fillBestTable();
  redraw();
  if (!result.best.empty()) {
    const auto best = std::find_if(
        result.considered.begin(), result.considered.end(), [&](const SearchedPlan& p) {
          return p.simulated && split_label(p.plan) == split_label(result.best.front().plan);
        });
    if (best != result.considered.end())
      selectCandidate(static_cast<int>(best - result.considered.begin()));
  } else {
    details_label_->setText(tr("No split fits: see how far each is over the memory line."));
  }
  emit searchFinished(!result.best.empty());
}

void SplitSearchDialog::refreshFilters() {
  for (int d = 0; d < SplitSearchModel::kDimensionCount; ++d) {
    QComboBox* combo = filters_[d];
    const QSignalBlocker quiet(combo);
    combo->clear();
    combo->addItem(tr("any"), QString());
    for (const QString& value : model_.values(static_cast<SplitSearchModel::Dimension>(d)))
      combo->addItem(value, value);
    combo->setEnabled(combo->count() > 1);
  }
}

void SplitSearchDialog::redraw() {
  QVector<double> x[kGraphCount], y[kGraphCount];
  std::vector<std::pair<double, double>> front;
  double most_memory = static_cast<double>(model_.usableBytes()), most_throughput = 0;
  double least_memory = most_memory;
  for (const SplitSearchModel::Point& point : model_.points()) {
    const double gib = point.memory_bytes / kGiB;
    const int graph = point.simulated ? Simulated : Estimated;
    x[graph].push_back(gib);
    y[graph].push_back(point.samples_per_s);
    if (point.pareto) front.emplace_back(gib, point.samples_per_s);
    most_memory = std::max(most_memory, point.memory_bytes);
    if (point.memory_bytes > 0) least_memory = std::min(least_memory, point.memory_bytes);
    if (selected_ && point.candidate == *selected_) {
      x[Chosen].push_back(gib);
      y[Chosen].push_back(point.samples_per_s);
    }
    most_throughput = std::max(most_throughput, point.samples_per_s);
  }
  std::sort(front.begin(), front.end());
  for (const auto& [gib, throughput] : front) {
    x[Front].push_back(gib);
    y[Front].push_back(throughput);
  }
  for (int g = 0; g < kGraphCount; ++g) plot_->graph(g)->setData(x[g], y[g]);
  // Past 30 times the usable memory the points would squeeze the rest; they lie beyond the edge.
  const double usable_gib = static_cast<double>(model_.usableBytes()) / kGiB;
  const double right = std::max(1.0, std::min(most_memory / kGiB, 30 * usable_gib)) * 1.3;
  const double left = std::max(1e-3, std::min(least_memory / kGiB, usable_gib) / 1.3);
  plot_->xAxis->setRange(left, right);
  plot_->yAxis->setRange(0, std::max(1.0, most_throughput * 1.1));
  usable_line_->setVisible(model_.usableBytes() > 0);
  usable_line_->point1->setCoords(usable_gib, 0);
  usable_line_->point2->setCoords(usable_gib, 1);
  over_memory_->setVisible(model_.usableBytes() > 0);
  over_memory_->topLeft->setCoords(usable_gib, 1e30);
  over_memory_->bottomRight->setCoords(1e6 * std::max(usable_gib, 1.0), -1e30);
  plot_->replot();
}

void SplitSearchDialog::fillBestTable() {
  const QSignalBlocker quiet(best_table_);
  const std::vector<SearchedPlan>& best = model_.result().best;
  best_table_->setRowCount(static_cast<int>(best.size()));
  for (int row = 0; row < static_cast<int>(best.size()); ++row) {
    const SearchedPlan& plan = best[static_cast<size_t>(row)];
    const QStringList cells = {QString::number(row + 1),
                               QString::fromStdString(split_label(plan.plan)),
                               step_text(plan.step_s),
                               QStringLiteral("%1%").arg(plan.mfu * 100, 0, 'f', 1),
                               QStringLiteral("%1%").arg(plan.bubble * 100, 0, 'f', 1),
                               bytes_text(static_cast<double>(plan.peak_bytes))};
    for (int column = 0; column < cells.size(); ++column)
      best_table_->setItem(row, column, new QTableWidgetItem(cells[column]));
  }
  best_table_->resizeColumnsToContents();
  best_table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
}

void SplitSearchDialog::pickAt(const QPointF& pixel) {
  std::optional<int> nearest;
  double nearest_distance = kPickRadiusPx;
  for (const SplitSearchModel::Point& point : model_.points()) {
    const double px = plot_->xAxis->coordToPixel(point.memory_bytes / kGiB);
    const double py = plot_->yAxis->coordToPixel(point.samples_per_s);
    const double distance = std::hypot(px - pixel.x(), py - pixel.y());
    if (distance <= nearest_distance) {
      nearest_distance = distance;
      nearest = point.candidate;
    }
  }
  if (nearest) selectCandidate(*nearest);
}

void SplitSearchDialog::selectCandidate(int candidate) {
  if (candidate < 0 || candidate >= static_cast<int>(model_.candidates().size())) return;
  selected_ = candidate;
  showDetails();
  redraw();
}

void SplitSearchDialog::showDetails() {
  const SearchedPlan& plan = model_.candidates()[*selected_];
  const double step = plan.simulated ? plan.step_s : plan.step_estimate_s;
  const double memory =
      static_cast<double>(plan.simulated ? plan.peak_bytes : plan.memory_estimate);
  const bool fits = memory <= static_cast<double>(model_.usableBytes());
  QString text = QStringLiteral("<b>%1</b><br>")
                     .arg(QString::fromStdString(split_label(plan.plan)).toHtmlEscaped());
  if (plan.simulated)
    text += tr("Simulated: step %1, MFU %2%, bubble %3%, peak %4 per device.")
                .arg(step_text(step))
                .arg(plan.mfu * 100, 0, 'f', 1)
                .arg(plan.bubble * 100, 0, 'f', 1)
                .arg(bytes_text(memory));
  else
    text += tr("Estimated (not simulated): step about %1 (at least %2), about %3 per device.")
                .arg(step_text(step))
                .arg(step_text(plan.step_bound_s))
                .arg(bytes_text(memory));
  if (!fits) text += QStringLiteral(" ") + tr("Over the usable memory: it would not fit.");
  if (plan.simulated) {
    QStringList parts;
    for (int c = 0; c < kMemoryCategoryCount; ++c)
      if (plan.peak_by_category[static_cast<size_t>(c)] > 0)
        parts << QStringLiteral("%1 %2")
                     .arg(memory_category_title(static_cast<MemoryCategory>(c)))
                     .arg(bytes_text(
                         static_cast<double>(plan.peak_by_category[static_cast<size_t>(c)])));
    text += QStringLiteral("<br>") + tr("At its peak: %1.").arg(parts.join(QStringLiteral(", ")));
  }
  if (const int rank = model_.rankOf(*selected_))
    text += QStringLiteral("<br>") +
            tr("The search's plan %1 of %2.").arg(rank).arg(model_.result().best.size());
  else if (const PrunedPlan* pruned = model_.prunedOf(*selected_)) {
    const QString reason = pruned->reason == PruneReason::Memory         ? tr("memory")
                           : pruned->reason == PruneReason::Slower       ? tr("slower")
                           : pruned->reason == PruneReason::NotSimulated ? tr("not simulated")
                                                                         : tr("invalid");
    text += QStringLiteral("<br>") +
            tr("Set aside (%1): %2").arg(reason).arg(whyText(*pruned).toHtmlEscaped());
  }
  details_label_->setText(text);
  const int rank = model_.rankOf(*selected_);
  const QSignalBlocker quiet(best_table_);
  if (rank > 0)
    best_table_->selectRow(rank - 1);
  else
    best_table_->clearSelection();
  load_button_->setEnabled(true);
  export_button_->setEnabled(true);
}

QString SplitSearchDialog::launchText(LaunchTool tool, bool* exported) const {
  if (exported) *exported = false;
  if (!selected_) return {};
  const Experiment chosen = searched_experiment(experiment_, model_.candidates()[*selected_].plan);
  try {
    const QString text = QString::fromStdString(launch_text(export_launch(chosen, tool), tool));
    if (exported) *exported = true;
    return text;
  } catch (const std::exception& error) {
    return tr("This split cannot be exported: %1").arg(QString::fromStdString(error.what()));
  }
}

void SplitSearchDialog::exportLaunch(LaunchTool tool) {
  bool exported = false;
  const QString text = launchText(tool, &exported);
  if (text.isEmpty()) return;
  if (exported) QApplication::clipboard()->setText(text);
  auto* window = new QDialog(this);
  window->setAttribute(Qt::WA_DeleteOnClose);
  window->setWindowTitle(tool == LaunchTool::Megatron ? tr("Megatron-LM flags")
                                                      : tr("torchtitan job section"));
  auto* view = new QPlainTextEdit(text, window);
  view->setReadOnly(true);
  view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  auto* note =
      new QLabel(exported ? tr("Copied to the clipboard. Fields listed as \"not exported\" have no "
                               "equivalent in the tool; set them by hand or leave them out.")
                          : QString(),
                 window);
  note->setWordWrap(true);
  auto* close = new QDialogButtonBox(QDialogButtonBox::Close, window);
  connect(close, &QDialogButtonBox::rejected, window, &QDialog::close);
  auto* layout = new QVBoxLayout(window);
  layout->addWidget(view, 1);
  layout->addWidget(note);
  layout->addWidget(close);
  window->resize(720, 420);
  window->open();
}

}  // namespace pipelab
