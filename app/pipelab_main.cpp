// pipelab: the desktop app. Everything but argv, the GPU probe and the
// scripted-export wiring lives in ui/.
#include <QApplication>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "core/runtime/executor.h"
#include "ui/gpu_availability.h"
#include "ui/headless_options.h"
#include "ui/headless_runner.h"
#include "ui/language.h"
#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/presets.h"

#ifdef PIPELAB_HAVE_CUDA
#include "gpu/executor/backend_registration.h"
#include "gpu/device/device_query.h"
#endif

namespace {

pipelab::GpuAvailability probe_gpus() {
  pipelab::GpuAvailability availability;
#ifdef PIPELAB_HAVE_CUDA
  const pipelab::gpu::GpuInventory inventory = pipelab::gpu::query_gpus();
  // CUDA can be chosen only once gpu/ has registered its executor.
  const std::vector<std::string> backends = pipelab::registered_backends();
  availability.built_with_cuda =
      std::find(backends.begin(), backends.end(), "cuda") != backends.end();
  availability.inventory = inventory;
#endif
  return availability;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef PIPELAB_HAVE_CUDA
  // Before the window asks which backends exist (probe_gpus).
  pipelab::gpu::register_cuda_backend();
#endif
  // Our flags first, before Qt needs a display: a typo fails fast, in one line.
  QStringList args;
  for (int i = 1; i < argc; ++i) args << QString::fromLocal8Bit(argv[i]);
  const pipelab::HeadlessParseResult parsed = pipelab::parse_headless_options(args);
  if (!parsed.options) {
    std::fprintf(stderr, "pipelab: %s\n", parsed.error.toLocal8Bit().constData());
    return 2;
  }
  const pipelab::HeadlessOptions& options = *parsed.options;
  if (options.help) {
    std::printf("%s\n", pipelab::headless_usage().toLocal8Bit().constData());
    return 0;
  }

  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("PipeLab"));
  QApplication::setApplicationName(QStringLiteral("PipeLab"));
  QApplication::setApplicationVersion(QStringLiteral(PIPELAB_VERSION_STRING));

  // Before any text is made: the user's language, else the system's.
  pipelab::apply_language(pipelab::startup_language());

  pipelab::MainWindow window(probe_gpus());
  if (!options.experiment_path.isEmpty() && !window.openFile(options.experiment_path) &&
      options.scripted()) {
    std::fprintf(stderr, "pipelab: %s\n", window.notice().toLocal8Bit().constData());
    return 2;
  }
  if (!options.preset.isEmpty() && !window.applyPreset(options.preset)) {
    QStringList ids;
    for (const pipelab::Preset& preset : pipelab::presets()) ids << preset.id;
    const QString message =
        QCoreApplication::translate("main", "no preset '%1'; the presets are: %2")
            .arg(options.preset, ids.join(QStringLiteral(", ")));
    std::fprintf(stderr, "pipelab: %s\n", message.toLocal8Bit().constData());
    return 2;
  }
  if (options.steps > 0) {
    window.document()->edit([&](pipelab::Experiment& e) { e.training.steps = options.steps; });
  }
  window.show();
  if (!options.attach.isEmpty()) window.attachTo(options.attach);

  pipelab::HeadlessRunner runner(&window, options);
  if (options.scripted()) {
    // A script never answers "save your changes?".
    window.setSaveQuestion([](const QString&) { return QMessageBox::Discard; });
    QObject::connect(&runner, &pipelab::HeadlessRunner::finished, &app, [&](int exit_code) {
      if (options.quit) QApplication::exit(exit_code);
    });
    QTimer::singleShot(0, &runner, &pipelab::HeadlessRunner::begin);
  }
  return QApplication::exec();
}
