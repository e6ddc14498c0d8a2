// The GUI binary's own command line, for making charts from a script:
//   pipelab [FILE.json | --preset ID] [--run] [--steps N]
//           [--export-timeline OUT.png|svg|pdf] [--export-memory OUT.png|svg|pdf]
//           [--export-gif OUT.gif] [--quit]
// and for watching a run that trains elsewhere: pipelab --attach HOST:PORT
// Parsed before QApplication starts, so a typo fails fast with one line even
// where there is no display. Qt's own single-dash options (-platform offscreen,
// -style fusion, ...) are left for Qt.
#pragma once

#include <QString>
#include <QStringList>
#include <optional>

namespace pipelab {

struct HeadlessOptions {
  QString experiment_path;  // empty: the default experiment
  QString preset;           // a preset's id (ui/models/presets.h) instead of a file
  bool run = false;         // train before exporting
  int steps = 0;            // > 0: overrides training.steps
  QString export_timeline;  // chart files to write once the run (or prediction) is ready
  QString export_memory;
  QString export_gif;  // one step of the timeline unfolding (ExportActions::exportTimelineGif)
  bool quit = false;   // exit after the exports instead of staying open
  QString attach;      // HOST:PORT of a run's live stream (pipelab-cli train --serve)
  bool help = false;

  // Whether the app should drive itself (run, export, quit) rather than wait for a user.
  bool scripted() const {
    return run || quit || !export_timeline.isEmpty() || !export_memory.isEmpty() ||
           !export_gif.isEmpty();
  }
};

struct HeadlessParseResult {
  std::optional<HeadlessOptions> options;
  QString error;  // one line when options is empty
};

// `args` excludes the program name.
HeadlessParseResult parse_headless_options(const QStringList& args);

QString headless_usage();

}  // namespace pipelab
