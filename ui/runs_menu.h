// RunsMenu: the window's Runs menu. It keeps every run that ends (finished,
// stopped or failed with something recorded) in the RunStore, lists them,
// shows the comparison window, and saves and reopens run files through file
// dialogs or straight from a path (scripts and tests). What was written, or
// why not, comes out as signals so the window decides where to show it.
#pragma once

#include <QObject>
#include <QString>

class QAction;
class QMenu;
class QWidget;

namespace pipelab {

class CompareView;
class RunController;
class RunStore;

class RunsMenu : public QObject {
  Q_OBJECT

 public:
  // `window` parents the dialogs and owns this object; the others outlive it.
  RunsMenu(RunStore* store, CompareView* compare, RunController* run, QWidget* window);

  // Fills `menu` now and whenever the store grows.
  void setMenu(QMenu* menu);

  // Brings the comparison window up.
  void showComparison();
  // Without dialogs; false with the reason signalled through failed().
  bool openRun(const QString& path);
  bool saveRun(int row, const QString& path);

 signals:
  void wrote(const QString& message);
  void failed(const QString& error);

 private:
  void rebuildMenu();
  void openWithDialog();
  void saveWithDialog(int row);
  void onRunPhaseChanged();

  RunStore* store_;
  CompareView* compare_;
  RunController* run_;
  QWidget* window_;
  QMenu* menu_ = nullptr;
  QAction* compare_action_;
  QAction* open_action_;
  QAction* save_action_;
};

}  // namespace pipelab
