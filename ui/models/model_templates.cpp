#include "ui/models/model_templates.h"

#include <QCoreApplication>
#include <QFile>

#include "core/io/experiment_io.h"

// A resource compiled into a static library is registered only when asked
// for by name (the linker may drop an initializer nobody references).
static void register_template_resources() { Q_INIT_RESOURCE(model_templates); }

namespace pipelab {

std::vector<ModelTemplate> model_templates() {
  register_template_resources();
  return {
      {QStringLiteral("tiny-gpt"),
       QCoreApplication::translate("ModelTemplates", "Tiny GPT (trains here)"),
       QStringLiteral(":/templates/tiny_gpt_copy.json")},
      {QStringLiteral("tiny-llama"),
       QCoreApplication::translate(
           "ModelTemplates", "Tiny LLaMA: grouped-query attention, rotary positions (trains here)"),
       QStringLiteral(":/templates/tiny_llama_copy.json")},
      {QStringLiteral("gpt2-small"),
       QCoreApplication::translate("ModelTemplates", "GPT-2 small (124M)"),
       QStringLiteral(":/templates/gpt2_small_predict.json")},
      {QStringLiteral("gpt3-175b"),
       QCoreApplication::translate("ModelTemplates", "GPT-3 175B (predict only)"),
       QStringLiteral(":/templates/gpt3_175b_predict.json")},
      {QStringLiteral("llama-7b"),
       QCoreApplication::translate("ModelTemplates", "LLaMA-style 7B (predict only)"),
       QStringLiteral(":/templates/llama_7b_predict.json")},
      {QStringLiteral("resnet-mnist"),
       QCoreApplication::translate("ModelTemplates", "Small ResNet (MNIST)"),
       QStringLiteral(":/templates/mnist_resnet.json")},
      {QStringLiteral("moe-switch"),
       QCoreApplication::translate("ModelTemplates", "MoE Transformer (Switch, top-1)"),
       QStringLiteral(":/templates/moe_switch_copy.json")},
      {QStringLiteral("moe-gshard"), QCoreApplication::translate("ModelTemplates", "GShard top-2"),
       QStringLiteral(":/templates/moe_expert_parallel.json")},
  };
}

Experiment load_model_template(const ModelTemplate& model_template) {
  QFile file(model_template.resource);
  if (!file.open(QIODevice::ReadOnly))
    throw ExperimentError("template " + model_template.id.toStdString() + " is missing from the build");
  // Validated like any file; a relative data path (MNIST's) is found beside the
  // examples the template came from, else in the working directory.
  return parse_experiment(file.readAll().toStdString(), PIPELAB_EXAMPLES_DIR);
}

Experiment apply_model_template(const Experiment& current, const Experiment& from_template) {
  Experiment result = from_template;
  result.backend = current.backend;
  result.file_path = current.file_path;
  return result;
}

}  // namespace pipelab
