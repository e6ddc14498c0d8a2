// Presets: the figures of a course on distributed training, each one click
// away: naive model parallelism, GPipe and its bubble formula and overhead
// breakdown, the F/B/U pipeline, GPipe vs PipeDream order, GPipe vs 1F1B
// memory, interleaving, zero bubble, asynchronous PipeDream and its weight
// stashing, PipeMare without a stash, synchronous and asynchronous data
// parallel, synced vs local batch norm in data parallel (two runs compared),
// tensor parallelism, and expert parallelism's all-to-alls. Every
// preset is a complete, valid experiment, most on the same small model, so
// switching between them compares schedules, not models. The menu groups them
// by topic.
#pragma once

#include <QString>
#include <optional>
#include <vector>

#include "core/io/experiment.h"
#include "ui/models/run_pair_controller.h"

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
  // A figure that is two runs side by side: Run trains `experiment`, then
  // this variant of it, and the comparison window opens on the two.
  std::optional<RunPair> compare_with;
};

std::vector<Preset> presets();
// The preset with this id; none when there is no such preset.
std::optional<Preset> preset_by_id(const QString& id);

}  // namespace pipelab
