// Presets: the figures of a course on distributed training, each one click
// away: naive model parallelism, GPipe and its bubble formula and overhead
// breakdown, the F/B/U pipeline, GPipe vs PipeDream order, GPipe vs 1F1B
// memory, interleaving, zero bubble, asynchronous PipeDream and its weight
// stashing, PipeMare without a stash, synchronous and asynchronous data
// parallel, synced vs local batch norm, tensor parallelism, and expert
// parallelism's all-to-alls.
//
// Each preset is an experiment file in examples/presets/ with a "preset"
// section: its id, its menu topic, its title and note in every language, and
// any further runs to compare (overrides of the first). The files are compiled
// into the app as resources and listed in file-name order, so a teacher adds a
// preset by adding a file (docs/app.md, "Presets"). Figures in a note come
// from the predictor, never typed in (preset_text.h).
#pragma once

#include <QString>
#include <QStringList>
#include <optional>
#include <string>
#include <vector>

#include "core/io/experiment.h"
#include "ui/models/run_series_controller.h"

namespace pipelab {

// The menu's submenus, in menu order.
enum class PresetTopic {
  PipelineSchedules,
  Memory,
  AsynchronousUpdates,
  DataAndTensorParallel,
  MixtureOfExperts
};
inline constexpr PresetTopic kPresetTopics[] = {
    PresetTopic::PipelineSchedules, PresetTopic::Memory, PresetTopic::AsynchronousUpdates,
    PresetTopic::DataAndTensorParallel, PresetTopic::MixtureOfExperts};
QString preset_topic_title(PresetTopic topic);  // the submenu's text, translated

struct Preset {
  QString id;           // stable, for tests and scripts: "gpipe", "naive", ...
  QString title;        // menu text
  QString what_to_see;  // a few sentences: what to look at, with the figure's formula
  PresetTopic topic = PresetTopic::PipelineSchedules;
  bool shows_overhead = false;  // its figure is the Overhead chart: the window brings it forward
  Experiment experiment;
  // A figure that is several runs side by side: Run trains each variant of
  // `experiment` in turn (the first is `experiment` itself), and the
  // comparison window opens on them all.
  std::optional<RunSeries> compare;
};

// Every preset, in the menu's order, its texts in `language` ("en", "zh_CN";
// a text missing in that language is shown in English). A file that does not
// read is left out; preset_problems() says why.
std::vector<Preset> presets(const QString& language);
// The same in the app's current language (ui/language.h).
std::vector<Preset> presets();
// The preset with this id; none when there is no such preset.
std::optional<Preset> preset_by_id(const QString& id);

// One preset file's text. Throws ExperimentError with what is wrong and where
// (the experiment's own problems, or the preset section's: a missing id, an
// unknown topic, a text without English, an override that does not apply, a
// figure the predictor does not know).
Preset parse_preset(const std::string& json_text, const QString& language);

// "FILE: why" for each shipped preset file that does not read (empty when all do).
QStringList preset_problems();

// The resource path of each shipped preset file, in menu order.
QStringList preset_files();

}  // namespace pipelab
