#include "ui/models/run_pair_controller.h"

#include "core/io/experiment_io.h"
#include "ui/core_message_text.h"
#include "ui/models/run_store.h"

namespace pipelab {

RunPairController::RunPairController(RunController* run, RunStore* store, QObject* parent)
    : QObject(parent), run_(run), store_(store) {
  // Queued: the Runs menu keeps an ended run in the store on this same signal,
  // and starting the next run inside another handler of it would pull the
  // finished executor from under the RunController's own tick.
  connect(
      run_, &RunController::phaseChanged, this, [this] { onRunPhaseChanged(); },
      Qt::QueuedConnection);
}

bool RunPairController::start(const Experiment& first, QString* error) {
  if (!pair_) return false;
  Experiment named_first = first;
  named_first.name = pair_->first_name.toStdString();
  // A preset's second run is the first with overrides, which validate: after
  // an edit that leaves the second invalid (or without the layer an override
  // names) it is refused with its reason, like an invalid first run.
  Experiment second;
  try {
    second = pair_->second_from_first(first);
  } catch (const ExperimentError& problem) {
    if (error)
      *error = tr("“%1” cannot run: %2")
                   .arg(pair_->second_name, core_message_text(QString::fromUtf8(problem.what())));
    return false;
  }
  second.name = pair_->second_name.toStdString();
  for (const Experiment* variant : {&named_first, &second}) {
    const std::vector<std::string> problems = validate_experiment(*variant);
    if (problems.empty()) continue;
    if (error)
      *error = tr("“%1” cannot run: %2")
                   .arg(QString::fromStdString(variant->name),
                        core_message_text(QString::fromStdString(problems.front())));
    return false;
  }
  running_ = *pair_;
  second_ = std::move(second);
  first_row_ = -1;
  part_ = Part::First;
  startRun(named_first);
  return true;
}

void RunPairController::cancel() { part_ = Part::None; }

void RunPairController::startRun(const Experiment& experiment) {
  rows_before_ = store_->count();
  run_->start(experiment);
}

int RunPairController::keptRow() const {
  return store_->count() > rows_before_ ? store_->count() - 1 : -1;
}

void RunPairController::onRunPhaseChanged() {
  // The phase now, not the one signalled: a queued call may arrive after a
  // newer change (the next run already preparing), which is then not an end.
  const RunController::Phase phase = run_->phase();
  if (part_ == Part::None || run_->isActive()) return;
  if (phase == RunController::Phase::Idle) {  // reset: nothing to report
    part_ = Part::None;
    return;
  }
  const bool done = phase == RunController::Phase::Finished;
  if (part_ == Part::First) {
    first_row_ = keptRow();
    if (done && first_row_ >= 0) {
      part_ = Part::Second;
      startRun(second_);
      emit secondStarted(running_.second_name);
      return;
    }
    part_ = Part::None;
    emit ended(tr("“%1” ended early (%2), so “%3” did not run")
                   .arg(running_.first_name, RunController::phaseName(phase), running_.second_name));
    return;
  }
  part_ = Part::None;
  const int second_row = keptRow();
  if (done && second_row >= 0) {
    emit finished(first_row_, second_row);
    return;
  }
  emit ended(tr("“%1” ended early (%2); the runs made are in the Runs menu")
                 .arg(running_.second_name, RunController::phaseName(phase)));
}

}  // namespace pipelab
