// Helpers shared by the ui test suites.
#pragma once

#include <QCoreApplication>
#include <QFile>
#include <QString>

#include "core/io/experiment_io.h"

namespace pipelab::testing {

// Settings of the tests stay apart from a user's PipeLab settings.
inline void use_test_settings() {
  QCoreApplication::setOrganizationName(QStringLiteral("PipeLabTests"));
  QCoreApplication::setApplicationName(QStringLiteral("PipeLabUiTests"));
}

// The default experiment, trained for only a few steps.
inline Experiment short_experiment(int steps) {
  Experiment experiment = default_experiment();
  experiment.training.steps = steps;
  experiment.training.eval_every = 2;
  return experiment;
}

inline bool write_text(const QString& path, const QByteArray& text) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  return file.write(text) == text.size();
}

inline QByteArray read_bytes(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return file.readAll();
}

}  // namespace pipelab::testing
