#include "ui/models/prediction_updater.h"

#include <exception>

#include "core/io/experiment_io.h"
#include "ui/models/experiment_document.h"

namespace pipelab {

PredictionUpdater::PredictionUpdater(ExperimentDocument* document, QObject* parent)
    : QObject(parent), document_(document) {
  debounce_.setSingleShot(true);
  debounce_.setInterval(kDebounceMs);
  connect(&debounce_, &QTimer::timeout, this, &PredictionUpdater::updateNow);
  connect(document_, &ExperimentDocument::changed, &debounce_, qOverload<>(&QTimer::start));
  updateNow();
}

void PredictionUpdater::updateNow() {
  debounce_.stop();
  const Experiment& experiment = document_->experiment();
  problems_.clear();
  for (const std::string& problem : validate_experiment(experiment))
    problems_ << QString::fromStdString(problem);
  prediction_.reset();
  // Huge plans would freeze the window while they simulate; the CLI is for those.
  const ParallelPlan& plan = experiment.parallel;
  const int64_t devices = int64_t(plan.dp) * plan.tp * plan.cp * plan.pp;
  if (problems_.isEmpty() && devices > kMaxInteractiveDevices) {
    problems_ << tr("parallel: dp x tp x cp x pp = %1 devices is more than the %2 the app simulates "
                    "interactively; use fewer, or pipelab-cli simulate for large plans")
                     .arg(devices)
                     .arg(kMaxInteractiveDevices);
  }
  if (problems_.isEmpty()) {
    try {
      prediction_ = std::make_shared<const Prediction>(predict_experiment(experiment));
    } catch (const std::exception& e) {
      problems_ << QString::fromStdString(e.what());
    }
  }
  emit updated();
}

}  // namespace pipelab
