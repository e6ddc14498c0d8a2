#include "ui/models/problem_routing.h"

namespace pipelab {

ProblemArea problem_area(const QString& message) {
  const QString text = message.trimmed();
  // Stage boundaries are edited beside the layer table.
  if (text.startsWith(QLatin1String("model.")) || text.startsWith(QLatin1String("the model")) ||
      text.startsWith(QLatin1String("parallel.boundaries")) ||
      text.startsWith(QLatin1String("parallel.partition = [")) ||
      text.startsWith(QLatin1String("layer ")) || text.startsWith(QLatin1String("Layer ")))
    return ProblemArea::Model;
  if (text.startsWith(QLatin1String("data.")) || text.startsWith(QLatin1String("training.")) ||
      text.startsWith(QLatin1String("seed")) || text.contains(QLatin1String("data file")) ||
      text.contains(QLatin1String("data set")))
    return ProblemArea::Data;
  if (text.startsWith(QLatin1String("parallel.")) || text.startsWith(QLatin1String("backend.")) ||
      text.startsWith(QLatin1String("simulation.")) || text.startsWith(QLatin1String("pp ")) ||
      text.startsWith(QLatin1String("tp ")) || text.startsWith(QLatin1String("micro-batch")) ||
      text.contains(QLatin1String("GPU")) || text.contains(QLatin1String("CUDA")))
    return ProblemArea::Parallel;
  // Otherwise the first field the message names, e.g. a diverged run's
  // "... lower training.optimizer.lr (now 10)".
  for (const auto& [field, area] :
       {std::pair{"training.", ProblemArea::Data}, std::pair{"data.", ProblemArea::Data},
        std::pair{"model.", ProblemArea::Model}, std::pair{"parallel.", ProblemArea::Parallel},
        std::pair{"backend.", ProblemArea::Parallel}}) {
    if (text.contains(QLatin1String(field))) return area;
  }
  return ProblemArea::Run;
}

QStringList problems_in(const QStringList& all, ProblemArea area) {
  QStringList selected;
  for (const QString& message : all)
    if (problem_area(message) == area) selected << message;
  return selected;
}

}  // namespace pipelab
