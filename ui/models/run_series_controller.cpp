#include "ui/models/run_series_controller.h"

#include "core/io/experiment_io.h"
#include "ui/core_message_text.h"
#include "ui/models/run_store.h"

namespace pipelab {

RunSeriesController::RunSeriesController(RunController* run, RunStore* store, QObject* parent)
    : QObject(parent), run_(run), store_(store) {
  // Queued: the Runs menu keeps an ended run in the store on this same signal,
  // and starting the next run inside another handler of it would pull the
  // finished executor from under the RunController's own tick.
  connect(
      run_, &RunController::phaseChanged, this, [this] { onRunPhaseChanged(); },
      Qt::QueuedConnection);
}

bool RunSeriesController::start(const Experiment& first, QString* error) {
  if (!series_) return false;
  // A preset's later runs are the first with overrides, which validate: after
  // an edit that leaves one invalid (or without the layer an override names)
  // it is refused with its reason, like an invalid first run.
  std::vector<Experiment> experiments;
  for (const RunVariant& variant : series_->runs) {
    Experiment experiment;
    try {
      experiment = variant.from_first(first);
    } catch (const ExperimentError& problem) {
      if (error)
        *error = tr("“%1” cannot run: %2")
                     .arg(variant.name, core_message_text(QString::fromUtf8(problem.what())));
      return false;
    }
    experiment.name = variant.name.toStdString();
    const std::vector<std::string> problems = validate_experiment(experiment);
    if (!problems.empty()) {
      if (error)
        *error =
            tr("“%1” cannot run: %2")
                .arg(variant.name, core_message_text(QString::fromStdString(problems.front())));
      return false;
    }
    experiments.push_back(std::move(experiment));
  }
  experiments_ = std::move(experiments);
  rows_.clear();
  startRun(0);
  return true;
}

void RunSeriesController::cancel() { part_ = 0; }

void RunSeriesController::startRun(int index) {
  part_ = index + 1;
  rows_before_ = store_->count();
  run_->start(experiments_[static_cast<size_t>(index)]);
}

int RunSeriesController::keptRow() const {
  return store_->count() > rows_before_ ? store_->count() - 1 : -1;
}

void RunSeriesController::onRunPhaseChanged() {
  // The phase now, not the one signalled: a queued call may arrive after a
  // newer change (the next run already preparing), which is then not an end.
  const RunController::Phase phase = run_->phase();
  if (part_ == 0 || run_->isActive()) return;
  if (phase == RunController::Phase::Idle) {  // reset: nothing to report
    part_ = 0;
    return;
  }
  const int row = keptRow();
  const QString name = QString::fromStdString(experiments_[static_cast<size_t>(part_ - 1)].name);
  if (phase != RunController::Phase::Finished || row < 0) {
    const bool last = part_ == runCount();
    part_ = 0;
    emit ended(last ? tr("“%1” ended early (%2); the runs made are in the Runs menu")
                          .arg(name, RunController::phaseName(phase))
                    : tr("“%1” ended early (%2), so the runs after it did not run")
                          .arg(name, RunController::phaseName(phase)));
    return;
  }
  rows_ << row;
  if (part_ < runCount()) {
    startRun(part_);
    emit nextStarted(part_,
                     QString::fromStdString(experiments_[static_cast<size_t>(part_ - 1)].name));
    return;
  }
  part_ = 0;
  emit finished(rows_);
}

}  // namespace pipelab
