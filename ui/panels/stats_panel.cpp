#include "ui/panels/stats_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/sim/bubble_formula.h"
#include "core/sim/communication_volume.h"
#include "core/sim/throughput.h"
#include "core/trace/run_statistics.h"
#include "ui/models/run_controller.h"
#include "ui/number_text.h"
#include "ui/panels/formula_words.h"
#include "ui/timeline/device_row_label.h"

namespace pipelab {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

QTableWidgetItem* number_item(const QString& text) {
  auto* item = new QTableWidgetItem(text);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

StatsPanel::StatsPanel(QWidget* parent) : QWidget(parent) {
  bubble_label_ = new QLabel(this);
  formula_label_ = new QLabel(this);
  throughput_label_ = new QLabel(this);
  for (QLabel* label : {bubble_label_, formula_label_, throughput_label_}) {
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  }
  QFont bold = bubble_label_->font();
  bold.setBold(true);
  bubble_label_->setFont(bold);

  table_ = new QTableWidget(0, 5, this);
  table_->setHorizontalHeaderLabels({tr("Device"), tr("Utilisation\nmeasured"),
                                     tr("Utilisation\npredicted"), tr("Peak memory\nmeasured"),
                                     tr("Peak memory\npredicted")});
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->setVisible(false);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->setDefaultSectionSize(20);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(bubble_label_);
  layout->addWidget(formula_label_);
  layout->addWidget(throughput_label_);
  layout->addWidget(table_, 1);
  refresh();
}

void StatsPanel::setRunController(RunController* run) {
  run_ = run;
  connect(run_, &RunController::traceReset, this, &StatsPanel::refresh);
  connect(run_, &RunController::phaseChanged, this, &StatsPanel::refresh);
  connect(run_, &RunController::traceGrew, this, [this] {
    if (throttle_.due()) refresh();
  });
  refresh();  // what the run already holds
}

void StatsPanel::setReplay(std::shared_ptr<const Replay> replay) {
  replay_ = std::move(replay);
  refresh();
}

void StatsPanel::setPrediction(std::shared_ptr<const Prediction> prediction,
                               const Experiment& experiment) {
  prediction_ = std::move(prediction);
  experiment_ = experiment;
  refresh();
}

QString StatsPanel::bubbleText() const { return bubble_label_->text(); }
QString StatsPanel::formulaText() const { return formula_label_->text(); }
QString StatsPanel::throughputText() const { return throughput_label_->text(); }

void StatsPanel::refresh() {
  const RefreshThrottle::Timing timing(throttle_);
  const Trace* measured = run_ && !run_->trace().events.empty() ? &run_->trace() : nullptr;
  const SimulationResult* predicted = prediction_ ? &prediction_->result : nullptr;

  // Measured numbers leave the warm-up step out (core/trace/run_statistics.h).
  const RunStatistics measured_stats = measured ? run_statistics(*measured) : RunStatistics{};
  const double measured_bubble = measured ? measured_stats.bubble_fraction : kNaN;
  const double simulated_bubble = predicted ? predicted->bubble_fraction : kNaN;
  const Replay* replay = replay_ && replay_->error.isEmpty() ? replay_.get() : nullptr;
  const double replayed_bubble = replay ? replay->result.bubble_fraction : kNaN;
  bubble_label_->setText(tr("Bubble: measured %1 · replayed %2 · simulated %3")
                             .arg(percent_text(measured_bubble), percent_text(replayed_bubble),
                                  percent_text(simulated_bubble)));

  const ParallelPlan& plan = experiment_.parallel;
  QString formula;
  try {
    // The costs the prediction used (stage 0's), so the numbers match its bubble.
    const UnitCosts costs = predicted ? predicted->formula_costs
                            : experiment_.simulation.profile == "unit" ? experiment_.simulation.unit
                                                                        : UnitCosts{};
    formula = tr("%1 formula: %2, with p = %3, m = %4%5: %6")
                  .arg(QString::fromLatin1(schedule_name(plan.schedule)),
                       formula_in_words(bubble_formula_text(plan.schedule)))
                  .arg(plan.pp)
                  .arg(plan.microbatches)
                  .arg(plan.chunks > 1 ? tr(", v = %1").arg(plan.chunks) : QString())
                  .arg(formula_in_words(bubble_formula_filled(
                      plan.schedule, plan.pp, plan.microbatches, std::max(1, plan.chunks), costs)));
  } catch (const std::exception& e) {
    formula = tr("Formula: %1").arg(QString::fromStdString(e.what()));
  }
  formula_label_->setText(formula);

  // Step time and throughput, measured then predicted.
  QStringList throughput;
  if (measured && !measured->steps.empty()) {
    const QString counted = measured_stats.includes_warmup
                                ? tr("warm-up only")
                                : tr("mean of steps %1–%2, warm-up left out")
                                      .arg(kWarmupSteps + 1)
                                      .arg(kWarmupSteps + measured_stats.steps_counted);
    throughput << tr("Measured: step %1 (%2) · %3 samples/s")
                      .arg(duration_text(measured_stats.step_time_s), counted,
                           count_text(measured_stats.samples_per_s));
  }
  if (replay) {
    // The step the run would take with one core per device.
    const double step_time = replay->stepTime();
    QString line = tr("Replayed: step %1").arg(duration_text(step_time));
    if (step_time > 0)
      line += tr(" · %1 samples/s").arg(count_text(double(replay->batch_size) / step_time));
    throughput << line;
  }
  if (predicted && prediction_) {
    const bool unit_time = predicted->trace.time_unit == "unit";
    const int window = std::max(1, prediction_->schedule.steps);
    const double step_time = predicted->makespan / window;
    QString line = tr("Predicted: step %1").arg(trace_time_text(step_time, unit_time));
    if (!unit_time && step_time > 0) {
      line += tr(" · %1 samples/s")
                  .arg(count_text(double(experiment_.training.batch_size) / step_time));
      // Model FLOPs utilisation, as Megatron-LM reports it (core/sim/throughput.h).
      try {
        const Throughput achieved = predicted_throughput(experiment_, *prediction_);
        line += tr(" · MFU %1% (%2 TFLOP/s per device)")
                    .arg(100 * achieved.mfu, 0, 'f', 1)
                    .arg(achieved.achieved_flops_per_device / 1e12, 0, 'f', 1);
      } catch (const std::exception&) {
        // No catalogue device behind this prediction: nothing to divide by.
      }
      // What device 0 sends per step to its data-parallel group: ZeRO's price
      // (1.5x plain data parallelism's at stage 3; communication_volume.h).
      const CommunicationVolume sent = communication_per_step(prediction_->schedule, 0);
      if (sent.data_parallel > 0)
        line += tr(" · data-parallel traffic %1 per device and step%2")
                    .arg(bytes_text(sent.data_parallel),
                         experiment_.parallel.zero > 0 ? tr(" (ZeRO %1)").arg(experiment_.parallel.zero)
                                                       : QString());
      // And around its context-parallel ring: K and V forward, and again with their gradients backward.
      if (sent.context_parallel > 0)
        line += tr(" · context-parallel ring traffic %1 per device and step").arg(bytes_text(sent.context_parallel));
    }
    throughput << line;
  }
  throughput_label_->setText(throughput.isEmpty() ? tr("Step time: — (no run yet)")
                                                  : throughput.join('\n'));

  // Per device.
  const std::vector<double>& measured_use_per_device = measured_stats.utilisation_per_device;
  const std::vector<int64_t>& measured_peaks = measured_stats.peak_bytes_per_device;
  const int devices = std::max(measured ? device_count(*measured) : 0,
                               predicted ? static_cast<int>(predicted->per_device.size()) : 0);
  table_->setRowCount(devices);
  for (int device = 0; device < devices; ++device) {
    const Trace* labels = measured ? measured : predicted ? &predicted->trace : nullptr;
    table_->setItem(device, 0,
                    new QTableWidgetItem(labels ? device_row_label(*labels, device)
                                                : tr("device %1").arg(device)));
    const double measured_use = device < static_cast<int>(measured_use_per_device.size())
                                    ? measured_use_per_device[device]
                                    : kNaN;
    table_->setItem(device, 1, number_item(percent_text(measured_use)));
    double predicted_use = kNaN;
    QString predicted_peak = QStringLiteral("—");
    if (predicted && device < static_cast<int>(predicted->per_device.size())) {
      predicted_use = 1.0 - predicted->per_device[device].bubble_fraction;
      predicted_peak = bytes_text(double(predicted->per_device[device].peak_total_bytes));
    }
    table_->setItem(device, 2, number_item(percent_text(predicted_use)));
    table_->setItem(device, 3,
                    number_item(device < static_cast<int>(measured_peaks.size())
                                    ? bytes_text(double(measured_peaks[device]))
                                    : QStringLiteral("—")));
    table_->setItem(device, 4, number_item(predicted_peak));
  }
}

}  // namespace pipelab
