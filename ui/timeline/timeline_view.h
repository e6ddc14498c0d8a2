// TimelineView: the measured timeline of the current run, the replayed one
// (the measured op times laid out on the schedule, one core per device) and
// the predicted (simulated) one, under or beside each other, with follow-live
// mode. The predicted chart follows the editor (it changes as the micro-batch
// slider moves); the measured one grows as the run controller drains events
// and is cut at the playback clock; the replayed one is redrawn whenever the
// ReplayUpdater has a new replay. The measured chart marks the warm-up step
// the statistics leave out, and a note above the charts says when the machine
// has fewer cores than the run has devices, with the replayed view one click away.
#pragma once

#include <QList>
#include <QStringList>
#include <QTimer>
#include <QWidget>
#include <memory>

#include "core/sim/experiment_prediction.h"
#include "ui/models/refresh_throttle.h"
#include "ui/models/replay_updater.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QPushButton;
class QSplitter;

namespace pipelab {

class RunController;
class TimelineChart;

class TimelineView : public QWidget {
  Q_OBJECT

 public:
  enum class Arrangement {
    MeasuredOnly,
    PredictedOnly,
    PredictedUnder,
    PredictedBeside,
    ReplayedUnder,           // replayed under measured
    PredictedUnderReplayed,  // predicted under replayed
    AllThree,                // measured, replayed, predicted
  };

  explicit TimelineView(QWidget* parent = nullptr);

  void setRunController(RunController* run);
  // A new prediction (null: none, because of `problems`).
  void setPrediction(std::shared_ptr<const Prediction> prediction, const QString& problems = {});
  // A new replay of the current run (null: none yet).
  void setReplay(std::shared_ptr<const Replay> replay);

  void setArrangement(Arrangement arrangement);
  Arrangement arrangement() const { return arrangement_; }
  void setFollowLive(bool follow);
  bool followLive() const;

  // Cores this machine gives the run's device threads (tests pretend).
  void setAvailableCores(int cores);
  // Shown while a CPU run has more virtual devices than cores: its measured
  // timeline is then mostly threads waiting for a core.
  QString coresNotice() const;
  QPushButton* showReplayedButton() const { return show_replayed_button_; }

  TimelineChart* measuredChart() const { return measured_; }
  TimelineChart* predictedChart() const { return predicted_; }
  TimelineChart* replayedChart() const { return replayed_; }
  QComboBox* arrangementCombo() const { return arrangement_combo_; }
  // The charts on screen, in reading order, and how they are arranged: what
  // an export of "the timeline" draws.
  QList<QCustomPlot*> visibleCharts() const;
  Qt::Orientation chartOrientation() const;

 signals:
  // Whichever control changed it (the Show combo or the View menu).
  void arrangementChanged(TimelineView::Arrangement arrangement);

 private:
  void onTraceReset();
  void onTraceGrew(int first_event);
  void onPlaybackMoved(double time);
  void updateMeasuredTitle();
  void updateReplayedTitle();
  void refreshMeasuredBubbles();
  void followNow(double time);
  void updateCoresNotice();
  // The measured chart before a run and the replayed one before a replay show
  // the rows the plan will fill (none while the experiment cannot be simulated).
  void showPlannedRows();

  RunController* run_ = nullptr;
  TimelineChart* measured_;
  TimelineChart* predicted_;
  TimelineChart* replayed_;
  std::shared_ptr<const Replay> replay_;
  QSplitter* splitter_;
  QComboBox* arrangement_combo_;
  QCheckBox* follow_check_;
  QWidget* cores_row_;
  QLabel* cores_label_;
  QPushButton* show_replayed_button_;
  int available_cores_;
  Arrangement arrangement_ = Arrangement::PredictedUnder;
  RefreshThrottle bubble_throttle_{250};  // measured bubbles: a few times a second
  QTimer* bubble_timer_;         // ... and once more after the last growth
  double follow_window_ = 0;     // trace seconds shown while following; 0 = everything so far
  bool window_chosen_by_user_ = false;
  QStringList planned_rows_;  // the predicted plan's device rows, shown before a run
};

}  // namespace pipelab
