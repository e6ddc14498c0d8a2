// RunStore: the runs made since the app started, and runs reopened from
// files, as a list model (the Runs menu and the comparison's run choosers
// read it). It holds data only, no widgets, as the other models here do.
// A run is its experiment and its recorded trace (core/io/run_file.h);
// statistics are computed from the trace when shown.
#pragma once

#include <QAbstractListModel>
#include <QString>
#include <memory>
#include <vector>

#include "core/io/run_file.h"

namespace pipelab {

class RunStore : public QAbstractListModel {
  Q_OBJECT

 public:
  explicit RunStore(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

  int count() const { return static_cast<int>(runs_.size()); }
  // The run at `row`; null when there is none.
  std::shared_ptr<const RunRecord> run(int row) const;

  // Keeps a finished run under a name made from its number, schedule and
  // experiment ("3 · 1f1b · MNIST MLP"). Returns its row.
  int add(const Experiment& experiment, const Trace& trace);
  // Keeps a run as it is (a reopened file keeps its name). Returns its row.
  int add(RunRecord run);

  // Writes the run at `row` to `path`; false with one line in *error.
  bool save(int row, const QString& path, QString* error) const;
  // Reads a run file and keeps it; its row, or -1 with one line in *error
  // (a malformed file changes nothing).
  int open(const QString& path, QString* error);

 private:
  std::vector<std::shared_ptr<const RunRecord>> runs_;
  int made_ = 0;  // runs numbered so far
};

}  // namespace pipelab
