// Model templates: whole Transformer experiments a user starts from in the
// model panel (a tiny GPT that trains here, GPT-2 small, GPT-3 175B and a
// LLaMA-style 7B that only the simulator can take). Each is a shipped example
// file, compiled in as a resource, so the description lives in one place.
#pragma once

#include <QString>
#include <vector>

#include "core/io/experiment.h"

namespace pipelab {

struct ModelTemplate {
  QString id;     // stable, for tests: "tiny-gpt", "gpt2-small", "gpt3-175b", "llama-7b"
  QString title;  // what the combo box shows
  QString resource;  // the example file, ":/templates/....json"
};

std::vector<ModelTemplate> model_templates();

// The template's experiment. Throws ExperimentError if the resource does not
// parse (a build problem, tested).
Experiment load_model_template(const ModelTemplate& model_template);

// `current` with the template's model, data, training, split and simulation
// profile; the backend the user chose stays.
Experiment apply_model_template(const Experiment& current, const Experiment& from_template);

}  // namespace pipelab
