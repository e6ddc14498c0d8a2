// PredictionUpdater: keeps the predicted (simulated) run in step with the
// experiment being edited. Edits arrive in bursts (a slider being dragged), so
// it waits until they pause for a few tens of milliseconds, then validates,
// builds the schedule and simulates it: fast enough to feel immediate.
#pragma once

#include <QObject>
#include <QStringList>
#include <QTimer>
#include <memory>

#include "core/sim/experiment_prediction.h"

namespace pipelab {

class ExperimentDocument;

class PredictionUpdater : public QObject {
  Q_OBJECT

 public:
  static constexpr int kDebounceMs = 50;
  static constexpr int kMaxInteractiveDevices = 256;

  explicit PredictionUpdater(ExperimentDocument* document, QObject* parent = nullptr);

  // The latest prediction; null while the experiment has problems.
  std::shared_ptr<const Prediction> prediction() const { return prediction_; }
  // validate_experiment's list (or the simulator's error), one line each.
  QStringList problems() const { return problems_; }

  // Recomputes now instead of after the debounce (tests, headless exports).
  void updateNow();

 signals:
  void updated();

 private:
  ExperimentDocument* document_;
  QTimer debounce_;
  std::shared_ptr<const Prediction> prediction_;
  QStringList problems_;
};

}  // namespace pipelab
