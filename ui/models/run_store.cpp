#include "ui/models/run_store.h"

#include <QFileInfo>

#include "ui/core_message_text.h"

namespace pipelab {

RunStore::RunStore(QObject* parent) : QAbstractListModel(parent) {}

int RunStore::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : count(); }

QVariant RunStore::data(const QModelIndex& index, int role) const {
  const std::shared_ptr<const RunRecord> record = run(index.row());
  if (!record || !index.isValid()) return {};
  if (role == Qt::DisplayRole) return QString::fromStdString(record->name);
  if (role == Qt::ToolTipRole)
    return tr("%1 steps · %2 ops recorded")
        .arg(record->trace.steps.size())
        .arg(record->trace.events.size());
  return {};
}

std::shared_ptr<const RunRecord> RunStore::run(int row) const {
  if (row < 0 || row >= count()) return nullptr;
  return runs_[static_cast<size_t>(row)];
}

int RunStore::add(const Experiment& experiment, const Trace& trace) {
  RunRecord record;
  record.name =
      tr("%1 · %2 · %3")
          .arg(made_ + 1)
          .arg(QString::fromStdString(trace.schedule), QString::fromStdString(experiment.name))
          .toStdString();
  record.experiment = experiment;
  record.trace = trace;
  return add(std::move(record));
}

int RunStore::add(RunRecord run) {
  ++made_;
  const int row = count();
  beginInsertRows(QModelIndex(), row, row);
  runs_.push_back(std::make_shared<const RunRecord>(std::move(run)));
  endInsertRows();
  return row;
}

bool RunStore::save(int row, const QString& path, QString* error) const {
  const std::shared_ptr<const RunRecord> record = run(row);
  if (!record) {
    if (error) *error = tr("there is no run to save; run an experiment first");
    return false;
  }
  try {
    save_run(*record, path.toStdString());
    return true;
  } catch (const RunFileError& e) {
    if (error) *error = core_message_text(QString::fromStdString(e.what()));
    return false;
  }
}

int RunStore::open(const QString& path, QString* error) {
  try {
    RunRecord record = load_run(path.toStdString());
    if (record.name.empty()) record.name = QFileInfo(path).completeBaseName().toStdString();
    return add(std::move(record));
  } catch (const RunFileError& e) {
    if (error) *error = core_message_text(QString::fromStdString(e.what()));
    return -1;
  } catch (const std::exception& e) {  // e.g. out of memory on a huge file
    if (error) *error = tr("cannot read %1: %2").arg(path, QString::fromLocal8Bit(e.what()));
    return -1;
  }
}

}  // namespace pipelab
