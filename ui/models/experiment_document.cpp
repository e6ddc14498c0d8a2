#include "ui/models/experiment_document.h"

#include <QFileInfo>
#include <exception>

#include "core/io/experiment_io.h"
#include "ui/core_message_text.h"

namespace pipelab {

ExperimentDocument::ExperimentDocument(QObject* parent)
    : QObject(parent), experiment_(default_experiment()) {}

void ExperimentDocument::edit(const std::function<void(Experiment&)>& change) {
  Experiment edited = experiment_;
  change(edited);
  // Comparing the saved form tells "really changed" from a widget echoing the
  // value it was just given.
  if (experiment_to_json(edited) == experiment_to_json(experiment_)) return;
  experiment_ = std::move(edited);
  setDirty(true);
  emit changed();
}

void ExperimentDocument::replace(const Experiment& experiment, const QString& file_path,
                                 bool dirty) {
  experiment_ = experiment;
  experiment_.file_path = file_path.toStdString();
  const bool path_changed = file_path != file_path_;
  file_path_ = file_path;
  setDirty(dirty);
  if (path_changed) emit filePathChanged(file_path_);
  emit changed();
}

bool ExperimentDocument::load(const QString& path, QString* error) {
  try {
    // Unvalidated: a file whose values need fixing still opens, and the panels
    // list what to fix; only a file that is not an experiment is refused.
    const Experiment loaded = load_experiment_unvalidated(path.toStdString());
    replace(loaded, QFileInfo(path).absoluteFilePath(), false);
    return true;
  } catch (const std::exception& e) {
    if (error)
      *error = tr("Could not open %1: %2")
                   .arg(QFileInfo(path).fileName(), core_message_text(QString::fromUtf8(e.what())));
    return false;
  }
}

bool ExperimentDocument::save(const QString& path, QString* error) {
  try {
    Experiment to_save = experiment_;
    to_save.file_path = path.toStdString();
    save_experiment(to_save, path.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = tr("Could not save %1: %2").arg(QFileInfo(path).fileName(), e.what());
    return false;
  }
  const QString absolute = QFileInfo(path).absoluteFilePath();
  experiment_.file_path = absolute.toStdString();
  if (absolute != file_path_) {
    file_path_ = absolute;
    emit filePathChanged(file_path_);
  }
  setDirty(false);
  return true;
}

QString ExperimentDocument::displayName() const {
  if (file_path_.isEmpty()) return tr("Untitled");
  return QFileInfo(file_path_).fileName();
}

void ExperimentDocument::setDirty(bool dirty) {
  if (dirty == dirty_) return;
  dirty_ = dirty;
  emit dirtyChanged(dirty_);
}

}  // namespace pipelab
