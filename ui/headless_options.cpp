#include "ui/headless_options.h"

#include <QCoreApplication>
#include <QSet>

#include "ui/exports/chart_export.h"

namespace pipelab {
namespace {

QString tr_options(const char* text) {
  return QCoreApplication::translate("HeadlessOptions", text);
}

// Qt's options that take a value, so the value is not read as a file name.
const QSet<QString>& qt_options_with_value() {
  static const QSet<QString> options = {
      QStringLiteral("-platform"),        QStringLiteral("-platformpluginpath"),
      QStringLiteral("-platformtheme"),   QStringLiteral("-plugin"),
      QStringLiteral("-style"),           QStringLiteral("-stylesheet"),
      QStringLiteral("-display"),         QStringLiteral("-geometry"),
      QStringLiteral("-qwindowgeometry"), QStringLiteral("-qwindowtitle"),
      QStringLiteral("-qwindowicon"),     QStringLiteral("-session"),
      QStringLiteral("-title"),           QStringLiteral("-name")};
  return options;
}

}  // namespace

QString headless_usage() {
  return tr_options(
      "usage: pipelab [FILE.json | --preset ID] [--run] [--steps N] "
      "[--export-timeline OUT.png|svg|pdf] [--export-memory OUT.png|svg|pdf] "
      "[--export-gif OUT.gif] [--quit] | pipelab --attach HOST:PORT");
}

HeadlessParseResult parse_headless_options(const QStringList& args) {
  HeadlessOptions options;
  auto fail = [](const QString& message) {
    return HeadlessParseResult{std::nullopt, message + QStringLiteral("; ") + headless_usage()};
  };

  for (int i = 0; i < args.size(); ++i) {
    QString arg = args[i];
    QString inline_value;
    bool has_inline_value = false;
    if (arg.startsWith(QLatin1String("--")) && arg.contains('=')) {
      inline_value = arg.section('=', 1);
      arg = arg.section('=', 0, 0);
      has_inline_value = true;
    }
    // The value of an option: "--steps 5" or "--steps=5".
    auto take_value = [&](QString* value) -> bool {
      if (has_inline_value) {
        *value = inline_value;
        return !value->isEmpty();
      }
      if (i + 1 >= args.size() || args[i + 1].startsWith(QLatin1String("--"))) return false;
      *value = args[++i];
      return true;
    };

    if (arg == QLatin1String("--help") || arg == QLatin1String("-h")) {
      options.help = true;
    } else if (arg == QLatin1String("--run")) {
      options.run = true;
    } else if (arg == QLatin1String("--quit")) {
      options.quit = true;
    } else if (arg == QLatin1String("--steps")) {
      QString value;
      if (!take_value(&value)) return fail(tr_options("--steps needs a number of steps"));
      bool ok = false;
      const int steps = value.toInt(&ok);
      if (!ok || steps < 1)
        return fail(tr_options("--steps %1: give a whole number of at least 1").arg(value));
      options.steps = steps;
    } else if (arg == QLatin1String("--export-timeline") ||
               arg == QLatin1String("--export-memory")) {
      QString value;
      if (!take_value(&value)) return fail(tr_options("%1 needs an output file name").arg(arg));
      if (!chart_format_for_path(value))
        return fail(
            tr_options("%1 %2: the file name must end in .png, .svg or .pdf").arg(arg, value));
      (arg == QLatin1String("--export-timeline") ? options.export_timeline
                                                 : options.export_memory) = value;
    } else if (arg == QLatin1String("--export-gif")) {
      QString value;
      if (!take_value(&value)) return fail(tr_options("--export-gif needs an output file name"));
      if (!value.endsWith(QLatin1String(".gif"), Qt::CaseInsensitive))
        return fail(tr_options("--export-gif %1: the file name must end in .gif").arg(value));
      options.export_gif = value;
    } else if (arg == QLatin1String("--preset")) {
      // The id is checked against the presets once the application runs.
      if (!take_value(&options.preset))
        return fail(tr_options("--preset needs a preset id, e.g. --preset gpipe"));
    } else if (arg == QLatin1String("--attach")) {
      if (!take_value(&options.attach) || !options.attach.contains(':'))
        return fail(tr_options("--attach needs HOST:PORT, as pipelab-cli train --serve prints it"));
    } else if (arg.startsWith(QLatin1String("--"))) {
      return fail(tr_options("unknown option %1").arg(arg));
    } else if (arg.startsWith('-') && arg.size() > 1) {
      // Qt's own option; skip its value too.
      if (qt_options_with_value().contains(arg)) ++i;
    } else if (options.experiment_path.isEmpty()) {
      options.experiment_path = arg;
    } else {
      return fail(tr_options("one experiment file at a time (got %1 and %2)")
                      .arg(options.experiment_path, arg));
    }
  }
  if (!options.preset.isEmpty() && !options.experiment_path.isEmpty())
    return fail(tr_options("give an experiment file or --preset, not both"));
  // The attached run brings its own experiment, and its window only watches.
  if (!options.attach.isEmpty() &&
      (!options.experiment_path.isEmpty() || !options.preset.isEmpty() || options.steps > 0 ||
       options.scripted()))
    return fail(
        tr_options("--attach HOST:PORT goes alone: it shows the run's own experiment "
                   "(no file, --preset, --run, --steps, exports or --quit)"));
  return HeadlessParseResult{options, QString()};
}

}  // namespace pipelab
