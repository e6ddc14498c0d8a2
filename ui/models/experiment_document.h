// ExperimentDocument: the experiment being edited, where it lives on disk and
// whether it has unsaved changes. Every panel edits through it and refreshes
// from its changed() signal, so there is one source of truth.
#pragma once

#include <QObject>
#include <QString>
#include <functional>

#include "core/io/experiment.h"

namespace pipelab {

class ExperimentDocument : public QObject {
  Q_OBJECT

 public:
  // Starts with default_experiment(), clean and without a file.
  explicit ExperimentDocument(QObject* parent = nullptr);

  const Experiment& experiment() const { return experiment_; }

  // Applies a panel's edit. When the edit changes something, the document
  // becomes dirty and changed() fires; an edit that changes nothing is ignored.
  void edit(const std::function<void(Experiment&)>& change);

  // Replaces the whole experiment (New, a preset). `file_path` may be empty.
  void replace(const Experiment& experiment, const QString& file_path, bool dirty);

  // Loads an experiment file. A file that is not a valid experiment file
  // (bad JSON, unknown keys or names, wrong types) is refused: returns false,
  // sets *error to one line saying what is wrong, and keeps the current
  // experiment untouched. Values that merely need fixing load, and show up as
  // validation problems in the panels.
  bool load(const QString& path, QString* error);
  // Saves to `path`, which becomes the document's file. Returns false and sets
  // *error when the file cannot be written.
  bool save(const QString& path, QString* error);

  bool isDirty() const { return dirty_; }
  QString filePath() const { return file_path_; }
  // The file name without folders, or "Untitled" for a new experiment.
  QString displayName() const;

 signals:
  void changed();
  void dirtyChanged(bool dirty);
  void filePathChanged(const QString& path);

 private:
  void setDirty(bool dirty);

  Experiment experiment_;
  QString file_path_;
  bool dirty_ = false;
};

}  // namespace pipelab
