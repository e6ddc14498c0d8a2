// PlanController: "Plan for me". Plans the open experiment for a cluster
// (core/planner) on a background thread, applies the plan to the document so
// the predicted timeline shows it at once, and keeps the experiment it
// replaced for one undo. No widgets: the dialog and the menu live in the window.
#pragma once

#include <QObject>
#include <QString>
#include <optional>
#include <string>
#include <variant>

#include "core/io/experiment.h"
#include "core/planner/plan_proposal.h"
#include "ui/models/background_job.h"

namespace pipelab {

class ExperimentDocument;

class PlanController : public QObject {
  Q_OBJECT

 public:
  explicit PlanController(ExperimentDocument* document, QObject* parent = nullptr);

  // Plans the document's experiment as it is now; planApplied() or
  // planFailed() follows. A request while one runs is ignored.
  void plan(const PlanRequest& request);
  bool isPlanning() const { return job_.isRunning(); }

  // Applies a split chosen elsewhere (the split search's view) as a plan:
  // planApplied(summary) with the same one undo, or planFailed() with the
  // reason when the document's experiment, as it is now, refuses it.
  void applySplit(const ParallelPlan& plan, const QString& summary);

  // Puts back the experiment the last plan replaced, while nothing else has
  // changed the document since.
  bool canUndo() const { return before_plan_.has_value(); }
  void undo();

 signals:
  void planningChanged(bool planning);
  // `summary`: one line, e.g. "DAPPLE: dp 4 x pp 2, 8 micro-batches, predicted step 4.4 ms".
  void planApplied(const QString& summary);
  void planFailed(const QString& reason);
  void undoAvailable(bool available);

 private:
  // A proposal, or the one-line reason there is none.
  using Outcome = std::variant<PlanProposal, std::string>;
  void onPlanned();
  void setUndo(std::optional<Experiment> before);

  ExperimentDocument* document_;
  std::string planned_from_;  // the experiment being planned, as JSON
  std::optional<Experiment> before_plan_;
  bool applying_ = false;  // the document change that is the plan itself
  BackgroundJob<Outcome> job_{this, [this] { onPlanned(); }};
};

}  // namespace pipelab
