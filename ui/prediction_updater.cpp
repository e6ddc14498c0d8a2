#include "ui/prediction_updater.h"

#include <exception>

#include "core/io/experiment_io.h"
#include "ui/experiment_document.h"

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
