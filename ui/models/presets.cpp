#include "ui/models/presets.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <algorithm>
#include <exception>
#include <nlohmann/json.hpp>

#include "core/io/experiment_io.h"
#include "ui/language.h"
#include "ui/models/preset_text.h"

namespace pipelab {
namespace {

using Json = nlohmann::json;

QString tr_preset(const char* text) { return QCoreApplication::translate("Presets", text); }

// The topics as files name them, in kPresetTopics' order.
const char* const kTopicNames[] = {"pipeline-schedules", "memory", "asynchronous-updates",
                                   "data-and-tensor-parallel", "mixture-of-experts"};

[[noreturn]] void refuse(const std::string& field, const std::string& why) {
  throw ExperimentError("preset." + field + ": " + why);
}

void check_keys(const Json& object, const std::string& field, const std::vector<std::string>& valid) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(valid.begin(), valid.end(), key) != valid.end()) continue;
    std::string names;
    for (const std::string& name : valid) names += (names.empty() ? "" : ", ") + name;
    refuse(field.empty() ? key : field + "." + key, "is not a preset field; use " + names);
  }
}

std::string string_field(const Json& section, const std::string& key) {
  const auto found = section.find(key);
  if (found == section.end() || !found->is_string() || found->get<std::string>().empty())
    refuse(key, "needs a text");
  return found->get<std::string>();
}

// A text in every language: {"en": "...", "zh_CN": "..."}; `language`'s, else English.
QString text_field(const Json& section, const std::string& field, const std::string& key,
                   const QString& language) {
  const std::string path = field.empty() ? key : field + "." + key;
  const auto found = section.find(key);
  if (found == section.end() || !found->is_object())
    refuse(path, "needs a text in each language, as {\"en\": \"...\", \"zh_CN\": \"...\"}");
  for (const auto& [code, text] : found->items())
    if (!text.is_string()) refuse(path + "." + code, "needs a text");
  const auto english = found->find("en");
  if (english == found->end() || english->get<std::string>().empty())
    refuse(path, "needs its English text (\"en\")");
  const auto translated = found->find(language.toStdString());
  const std::string& text =
      translated != found->end() && !translated->get<std::string>().empty() ? translated->get_ref<const std::string&>()
                                                                             : english->get_ref<const std::string&>();
  return QString::fromStdString(text);
}

PresetTopic topic_field(const Json& section) {
  const std::string name = string_field(section, "topic");
  for (size_t i = 0; i < std::size(kTopicNames); ++i)
    if (name == kTopicNames[i]) return kPresetTopics[i];
  std::string names;
  for (const char* topic : kTopicNames) names += (names.empty() ? "" : ", ") + std::string(topic);
  refuse("topic", "'" + name + "' is not a topic; use " + names);
}

// A run's overrides of the first run's experiment (`field` names them for a
// mistake), checked to apply to it.
std::vector<std::string> overrides_field(const Json& set, const std::string& field,
                                         const Experiment& first) {
  if (!set.is_array()) refuse(field, "needs a list of overrides such as [\"parallel.pp=4\"]");
  std::vector<std::string> overrides;
  for (const Json& assignment : set) {
    if (!assignment.is_string()) refuse(field, "needs texts such as \"parallel.pp=4\"");
    overrides.push_back(assignment.get<std::string>());
  }
  try {
    Experiment variant = first;
    apply_overrides(variant, overrides);
  } catch (const std::exception& error) {
    refuse(field, error.what());
  }
  return overrides;
}

RunVariant variant_of(QString name, std::vector<std::string> overrides) {
  return {std::move(name), [overrides = std::move(overrides)](Experiment e) {
            apply_overrides(e, overrides);
            return e;
          }};
}

// The runs of a comparison, each the first run's experiment with overrides:
// {"runs": [{"name": {...}, "set": [...]}, ...]} (the first's set is usually
// empty), or for two runs {"first": {...}, "second": {...}, "set": [...]}.
RunSeries compare_field(const Json& section, const Experiment& first, const QString& language) {
  RunSeries series;
  if (!section.contains("runs")) {
    check_keys(section, "compare", {"first", "second", "set"});
    const auto set = section.find("set");
    if (set == section.end() || !set->is_array() || set->empty())
      refuse("compare.set",
             "needs the overrides that make the second run, as --set takes them "
             "([\"parallel.schedule=1f1b\"])");
    series.runs.push_back(variant_of(text_field(section, "compare", "first", language), {}));
    series.runs.push_back(variant_of(text_field(section, "compare", "second", language),
                                     overrides_field(*set, "compare.set", first)));
    return series;
  }
  check_keys(section, "compare", {"runs"});
  const Json& runs = section["runs"];
  if (!runs.is_array() || runs.size() < 2 || runs.size() > static_cast<size_t>(kMaxComparedRuns))
    refuse("compare.runs", "needs 2 to " + std::to_string(kMaxComparedRuns) +
                               " runs, each {\"name\": {\"en\": \"...\"}, \"set\": [...]}");
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string field = "compare.runs[" + std::to_string(i) + "]";
    const Json& run = runs[i];
    if (!run.is_object()) refuse(field, "needs {\"name\": {\"en\": \"...\"}, \"set\": [...]}");
    check_keys(run, field, {"name", "set"});
    const auto set = run.find("set");
    series.runs.push_back(variant_of(text_field(run, field, "name", language),
                                     set == run.end()
                                         ? std::vector<std::string>{}
                                         : overrides_field(*set, field + ".set", first)));
  }
  for (size_t i = 0; i < series.runs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (series.runs[i].name == series.runs[j].name)
        refuse("compare.runs[" + std::to_string(i) + "].name",
               "is the name of run " + std::to_string(j) + " too; give each run its own name");
  return series;
}

// The id a preset file's text gives itself ("" when it gives none).
QString preset_id(const std::string& json_text) {
  const Json document = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object()) return {};
  const auto section = document.find("preset");
  if (section == document.end() || !section->is_object()) return {};
  const auto id = section->find("id");
  if (id == section->end() || !id->is_string()) return {};
  return QString::fromStdString(id->get<std::string>());
}

}  // namespace

QString preset_topic_title(PresetTopic topic) {
  switch (topic) {
    case PresetTopic::PipelineSchedules:
      return tr_preset(QT_TRANSLATE_NOOP("Presets", "Pipeline schedules"));
    case PresetTopic::Memory:
      return tr_preset(QT_TRANSLATE_NOOP("Presets", "Memory"));
    case PresetTopic::AsynchronousUpdates:
      return tr_preset(QT_TRANSLATE_NOOP("Presets", "Asynchronous updates"));
    case PresetTopic::DataAndTensorParallel:
      return tr_preset(QT_TRANSLATE_NOOP("Presets", "Data and tensor parallel"));
    case PresetTopic::MixtureOfExperts:
      return tr_preset(QT_TRANSLATE_NOOP("Presets", "Mixture of experts"));
  }
  return {};
}

Preset parse_preset(const std::string& json_text, const QString& language) {
  // The experiment reads as any experiment file does (it skips the preset section).
  Preset preset;
  preset.experiment = parse_experiment(json_text, PIPELAB_EXAMPLES_DIR);
  const Json document = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  const auto section = document.find("preset");
  if (section == document.end() || !section->is_object())
    throw ExperimentError("preset: missing; a preset file is an experiment file with a \"preset\" "
                          "section (docs/app.md, Presets)");
  check_keys(*section, "", {"id", "topic", "title", "what_to_see", "shows_overhead", "compare"});
  preset.id = QString::fromStdString(string_field(*section, "id"));
  preset.topic = topic_field(*section);
  preset.title = text_field(*section, "", "title", language);
  const QString what_to_see = text_field(*section, "", "what_to_see", language);
  preset.what_to_see = expand_prediction_figures(what_to_see, preset.experiment);
  if (const auto overhead = section->find("shows_overhead"); overhead != section->end()) {
    if (!overhead->is_boolean()) refuse("shows_overhead", "needs true or false");
    preset.shows_overhead = overhead->get<bool>();
  }
  if (const auto compare = section->find("compare"); compare != section->end()) {
    if (!compare->is_object()) refuse("compare", "needs {\"runs\": [...]}");
    preset.compare = compare_field(*compare, preset.experiment, language);
  }
  // The run is called after the preset, in the language it is shown in.
  preset.experiment.name = preset.title.toStdString();
  return preset;
}

QStringList preset_files() {
  QStringList files;
  const QDir folder(QStringLiteral(":/presets"));
  for (const QString& name : folder.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name))
    files << folder.filePath(name);
  return files;
}

namespace {

// Every shipped preset in `language` (only the one with `wanted_id`, when it is
// given), and "FILE: why" for each that does not read.
std::vector<Preset> read_presets(const QString& language, QStringList* problems,
                                 const QString& wanted_id = {}) {
  std::vector<Preset> list;
  for (const QString& path : preset_files()) {
    QFile file(path);
    try {
      if (!file.open(QIODevice::ReadOnly)) throw ExperimentError("cannot be read");
      const std::string text = file.readAll().toStdString();
      if (!wanted_id.isEmpty()) {
        // Only the wanted preset is read in full (with its predictions).
        if (preset_id(text) != wanted_id) continue;
      }
      list.push_back(parse_preset(text, language));
    } catch (const std::exception& error) {
      if (problems) *problems << QFileInfo(path).fileName() + QStringLiteral(": ") + QString::fromUtf8(error.what());
    }
  }
  return list;
}

}  // namespace

std::vector<Preset> presets(const QString& language) { return read_presets(language, nullptr); }

std::vector<Preset> presets() { return presets(current_language()); }

QStringList preset_problems() {
  QStringList problems;
  read_presets(QStringLiteral("en"), &problems);
  return problems;
}

std::optional<Preset> preset_by_id(const QString& id) {
  if (id.isEmpty()) return std::nullopt;
  std::vector<Preset> found = read_presets(current_language(), nullptr, id);
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

}  // namespace pipelab
