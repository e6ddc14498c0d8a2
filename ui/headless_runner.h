// HeadlessRunner: drives the window for `pipelab --run --export-… --quit`:
// optionally trains, then writes the requested charts, then (with --quit)
// ends the application with an exit code a script can check.
#pragma once

#include <QObject>

#include "ui/headless_options.h"

namespace pipelab {

class MainWindow;

class HeadlessRunner : public QObject {
  Q_OBJECT

 public:
  // Chart sizes for scripted exports, so slides come out the same every time.
  static constexpr int kChartWidth = 1600;

  HeadlessRunner(MainWindow* window, const HeadlessOptions& options, QObject* parent = nullptr);

  // Starts the work; call once the event loop runs (e.g. via a queued call).
  void begin();

 signals:
  // Everything asked for is done: 0 on success, 1 when a run or an export failed.
  void finished(int exit_code);

 private:
  void exportAndFinish();

  MainWindow* window_;
  HeadlessOptions options_;
  bool failed_ = false;
  bool done_ = false;
};

}  // namespace pipelab
