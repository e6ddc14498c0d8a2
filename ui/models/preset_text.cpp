#include "ui/models/preset_text.h"

#include <QRegularExpression>
#include <QStringList>
#include <map>
#include <string>
#include <vector>

#include "core/io/experiment_io.h"
#include "core/sim/communication_volume.h"
#include "core/sim/experiment_prediction.h"

namespace pipelab {
namespace {

constexpr double kMebibyte = 1024.0 * 1024.0;

// The prediction of `experiment` changed by `overrides` ("key=value, ...").
Prediction predict_variant(const Experiment& experiment, const QString& overrides) {
  Experiment variant = experiment;
  std::vector<std::string> assignments;
  for (const QString& assignment : overrides.split(QLatin1Char(','), Qt::SkipEmptyParts))
    assignments.push_back(assignment.trimmed().toStdString());
  if (!assignments.empty()) apply_overrides(variant, assignments);
  return predict_experiment(variant);
}

int device_of(const QString& figure, const QString& name, const Prediction& prediction) {
  bool ok = false;
  const int device = name.mid(name.indexOf(QLatin1Char('.')) + 1).toInt(&ok);
  if (!ok || device < 0 || device >= static_cast<int>(prediction.result.per_device.size()))
    throw ExperimentError("preset figure " + figure.toStdString() + " names device " +
                          name.mid(name.indexOf(QLatin1Char('.')) + 1).toStdString() +
                          ", but the experiment has devices 0 to " +
                          std::to_string(prediction.result.per_device.size() - 1));
  return device;
}

double figure_value(const QString& figure, const QString& name, const Prediction& prediction) {
  if (name == QLatin1String("bubble_percent")) return 100.0 * prediction.result.bubble_fraction;
  if (name == QLatin1String("step_ms")) {
    if (prediction.cost.is_unit())
      throw ExperimentError("preset figure " + figure.toStdString() +
                            " needs a device profile (simulation.profile), not unit costs");
    return 1000.0 * prediction.result.makespan / prediction.schedule.steps;
  }
  if (name.startsWith(QLatin1String("peak_mib."))) {
    const DeviceSimStats& device = prediction.result.per_device[device_of(figure, name, prediction)];
    return static_cast<double>(device.peak_total_bytes) / kMebibyte;
  }
  if (name.startsWith(QLatin1String("host_mib."))) {
    const DeviceSimStats& device = prediction.result.per_device[device_of(figure, name, prediction)];
    return static_cast<double>(device.peak_bytes[static_cast<int>(MemoryCategory::Host)]) / kMebibyte;
  }
  if (name.startsWith(QLatin1String("states_mib."))) {
    const DeviceSimStats& device = prediction.result.per_device[device_of(figure, name, prediction)];
    int64_t states = 0;
    for (MemoryCategory category :
         {MemoryCategory::Weights, MemoryCategory::Gradients, MemoryCategory::OptimizerState})
      states += device.peak_bytes[static_cast<int>(category)];
    return static_cast<double>(states) / kMebibyte;
  }
  if (name.startsWith(QLatin1String("activations_mib."))) {
    const DeviceSimStats& device =
        prediction.result.per_device[device_of(figure, name, prediction)];
    return static_cast<double>(device.peak_bytes[static_cast<int>(MemoryCategory::Activations)]) /
           kMebibyte;
  }
  if (name.startsWith(QLatin1String("sent_mib.")))
    return communication_per_step(prediction.schedule, device_of(figure, name, prediction))
               .data_parallel /
           kMebibyte;
  if (name.startsWith(QLatin1String("ring_mib.")))
    return communication_per_step(prediction.schedule, device_of(figure, name, prediction))
               .context_parallel /
           kMebibyte;
  throw ExperimentError(
      "preset figure " + figure.toStdString() +
      " is unknown; use step_ms, bubble_percent, peak_mib.D, host_mib.D, states_mib.D, "
      "activations_mib.D, sent_mib.D or ring_mib.D (D a device), optionally with overrides "
      "after @");
}

}  // namespace

QString expand_prediction_figures(const QString& text, const Experiment& experiment) {
  // {name} or {name @ key=value, key=value}
  static const QRegularExpression figure_pattern(QStringLiteral("\\{([^{}@]*)(?:@([^{}]*))?\\}"));
  std::map<QString, Prediction> predictions;  // by overrides: one prediction per variant
  QString expanded;
  qsizetype from = 0;
  QRegularExpressionMatchIterator matches = figure_pattern.globalMatch(text);
  while (matches.hasNext()) {
    const QRegularExpressionMatch match = matches.next();
    const QString figure = match.captured(0);
    const QString name = match.captured(1).trimmed();
    const QString overrides = match.captured(2).trimmed();
    auto found = predictions.find(overrides);
    if (found == predictions.end()) {
      try {
        found = predictions.emplace(overrides, predict_variant(experiment, overrides)).first;
      } catch (const std::exception& error) {
        throw ExperimentError("preset figure " + figure.toStdString() + ": " + error.what());
      }
    }
    expanded += text.mid(from, match.capturedStart(0) - from);
    expanded += QString::number(figure_value(figure, name, found->second), 'f', 1);
    from = match.capturedEnd(0);
  }
  expanded += text.mid(from);
  return expanded;
}

}  // namespace pipelab
