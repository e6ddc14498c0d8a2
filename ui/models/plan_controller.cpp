#include "ui/models/plan_controller.h"

#include <exception>

#include "core/io/experiment_io.h"
#include "ui/models/experiment_document.h"

namespace pipelab {
namespace {

QString summary_of(const PlanProposal& proposal) {
  const ParallelPlan& plan = proposal.experiment.parallel;
  QString text =
      PlanController::tr("%1 plan: dp %2 x tp %3 x pp %4, %5 micro-batches, %6; predicted step %7")
          .arg(proposal.planner == PlannerKind::Dapple ? QStringLiteral("DAPPLE")
                                                       : QStringLiteral("PipeDream"))
          .arg(plan.dp)
          .arg(plan.tp)
          .arg(plan.pp)
          .arg(plan.microbatches)
          .arg(QString::fromUtf8(schedule_name(plan.schedule)))
          .arg(QString::fromStdString(milliseconds_text(proposal.predicted_step_s)));
  if (!proposal.note.empty()) text += QStringLiteral(". ") + QString::fromStdString(proposal.note);
  return text;
}

}  // namespace

PlanController::PlanController(ExperimentDocument* document, QObject* parent)
    : QObject(parent), document_(document) {
  // Any other edit makes the saved experiment stale: undoing would lose it.
  connect(document_, &ExperimentDocument::changed, this, [this] {
    if (!applying_) setUndo(std::nullopt);
  });
}

void PlanController::plan(const PlanRequest& request) {
  if (job_.isRunning()) return;
  const Experiment experiment = document_->experiment();
  planned_from_ = experiment_to_json(experiment);
  job_.start([experiment, request]() -> Outcome {
    try {
      const std::vector<std::string> problems = validate_experiment(experiment);
      if (!problems.empty()) return "fix the experiment first: " + problems.front();
      return propose_plan(experiment, request);
    } catch (const std::exception& error) {
      return std::string(error.what());
    }
  });
  emit planningChanged(true);
}

void PlanController::onPlanned() {
  std::optional<Outcome> outcome = job_.take();
  emit planningChanged(false);
  if (!outcome) return;
  if (const std::string* reason = std::get_if<std::string>(&*outcome)) {
    emit planFailed(QString::fromStdString(*reason));
    return;
  }
  const Experiment before = document_->experiment();
  if (experiment_to_json(before) != planned_from_) {
    emit planFailed(tr("the experiment changed while it was being planned; plan it again"));
    return;
  }
  const PlanProposal& proposal = std::get<PlanProposal>(*outcome);
  applying_ = true;
  document_->edit(
      [&](Experiment& experiment) { experiment.parallel = proposal.experiment.parallel; });
  applying_ = false;
  setUndo(before);
  emit planApplied(summary_of(proposal));
}

void PlanController::applySplit(const ParallelPlan& plan, const QString& summary) {
  if (job_.isRunning()) return;
  const Experiment before = document_->experiment();
  Experiment planned = before;
  planned.parallel = plan;
  const std::vector<std::string> problems = validate_experiment(planned);
  if (!problems.empty()) {
    emit planFailed(tr("the split does not suit the experiment as it is now: %1")
                        .arg(QString::fromStdString(problems.front())));
    return;
  }
  applying_ = true;
  document_->edit([&](Experiment& experiment) { experiment.parallel = plan; });
  applying_ = false;
  setUndo(before);
  emit planApplied(summary);
}

void PlanController::undo() {
  if (!before_plan_) return;
  const Experiment before = *before_plan_;
  setUndo(std::nullopt);
  document_->edit([&](Experiment& experiment) { experiment = before; });
}

void PlanController::setUndo(std::optional<Experiment> before) {
  const bool was = before_plan_.has_value();
  before_plan_ = std::move(before);
  if (was != before_plan_.has_value()) emit undoAvailable(before_plan_.has_value());
}

}  // namespace pipelab
