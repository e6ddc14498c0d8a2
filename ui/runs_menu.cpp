#include "ui/runs_menu.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QRegularExpression>
#include <QSettings>
#include <QWidget>

#include "ui/models/run_controller.h"
#include "ui/models/run_store.h"
#include "ui/panels/compare_view.h"

namespace pipelab {
namespace {

const char* const kRunFolderKey = "runFolder";

}  // namespace

RunsMenu::RunsMenu(RunStore* store, CompareView* compare, RunController* run, QWidget* window)
    : QObject(window), store_(store), compare_(compare), run_(run), window_(window) {
  compare_action_ = new QAction(tr("&Compare runs…"), this);
  compare_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
  compare_action_->setToolTip(
      tr("Two runs side by side: loss, memory, statistics and timelines on one time scale"));
  connect(compare_action_, &QAction::triggered, this, &RunsMenu::showComparison);
  open_action_ = new QAction(tr("&Open a run…"), this);
  connect(open_action_, &QAction::triggered, this, &RunsMenu::openWithDialog);
  save_action_ = new QAction(tr("&Save the latest run…"), this);
  connect(save_action_, &QAction::triggered, this, [this] { saveWithDialog(store_->count() - 1); });

  connect(compare_, &CompareView::saveRequested, this, &RunsMenu::saveWithDialog);
  connect(compare_, &CompareView::openRequested, this, &RunsMenu::openWithDialog);
  connect(store_, &QAbstractItemModel::rowsInserted, this, &RunsMenu::rebuildMenu);
  connect(run_, &RunController::phaseChanged, this, &RunsMenu::onRunPhaseChanged);
}

void RunsMenu::setMenu(QMenu* menu) {
  menu_ = menu;
  menu_->setToolTipsVisible(true);
  rebuildMenu();
}

void RunsMenu::onRunPhaseChanged() {
  // A run that ended with something recorded is kept, whatever ended it.
  const RunController::Phase phase = run_->phase();
  const bool ended = phase == RunController::Phase::Finished ||
                     phase == RunController::Phase::Stopped ||
                     phase == RunController::Phase::Failed;
  if (ended && !run_->trace().events.empty()) store_->add(run_->experiment(), run_->trace());
}

void RunsMenu::rebuildMenu() {
  if (!menu_) return;
  menu_->clear();
  menu_->addAction(compare_action_);
  menu_->addAction(open_action_);
  menu_->addAction(save_action_);
  save_action_->setEnabled(store_->count() > 0);
  menu_->addSeparator();
  if (store_->count() == 0) {
    menu_->addAction(tr("(no runs yet)"))->setEnabled(false);
    return;
  }
  // Newest first; choosing one compares it with the run before it.
  for (int row = store_->count() - 1; row >= 0; --row) {
    const QModelIndex index = store_->index(row);
    QAction* action = menu_->addAction(store_->data(index).toString());
    action->setToolTip(store_->data(index, Qt::ToolTipRole).toString());
    connect(action, &QAction::triggered, this, [this, row] {
      compare_->setRuns(row > 0 ? row - 1 : -1, row);
      showComparison();
    });
  }
}

void RunsMenu::showComparison() {
  compare_->show();
  compare_->raise();
  compare_->activateWindow();
}

bool RunsMenu::openRun(const QString& path) {
  QString error;
  const int row = store_->open(path, &error);
  if (row < 0) {
    emit failed(tr("Open a run: %1").arg(error));
    return false;
  }
  emit wrote(tr("Opened the run %1").arg(path));
  return true;
}

bool RunsMenu::saveRun(int row, const QString& path) {
  QString error;
  if (!store_->save(row, path, &error)) {
    emit failed(tr("Save the run: %1").arg(error));
    return false;
  }
  emit wrote(tr("Saved the run to %1").arg(path));
  return true;
}

void RunsMenu::openWithDialog() {
  QSettings settings;
  const QString path = QFileDialog::getOpenFileName(window_, tr("Open a saved run"),
                                                    settings.value(kRunFolderKey).toString(),
                                                    tr("PipeLab runs (*.json);;All files (*)"));
  if (path.isEmpty()) return;
  settings.setValue(kRunFolderKey, QFileInfo(path).absolutePath());
  if (openRun(path)) showComparison();
}

void RunsMenu::saveWithDialog(int row) {
  const std::shared_ptr<const RunRecord> record = store_->run(row);
  if (!record) {
    emit failed(tr("Save the run: there is no run to save; run an experiment first"));
    return;
  }
  QSettings settings;
  const QString suggestion = QString::fromStdString(record->name)
                                 .simplified()
                                 .replace(QRegularExpression("[^\\w.-]+"), "-") +
                             QStringLiteral(".run.json");
  QString path = QFileDialog::getSaveFileName(
      window_, tr("Save the run"),
      QDir(settings.value(kRunFolderKey).toString()).filePath(suggestion),
      tr("PipeLab runs (*.json)"));
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".json");
  settings.setValue(kRunFolderKey, QFileInfo(path).absolutePath());
  saveRun(row, path);
}

}  // namespace pipelab
