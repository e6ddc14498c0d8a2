// Which panel a problem belongs next to. validate_experiment and the core's
// errors name the field they are about ("parallel.microbatches = ...",
// "data.path ..."), so the field's section decides where the user reads it.
#pragma once

#include <QString>
#include <QStringList>

namespace pipelab {

enum class ProblemArea { Model, Parallel, Data, Run };

ProblemArea problem_area(const QString& message);

// The messages of `all` that belong to `area`.
QStringList problems_in(const QStringList& all, ProblemArea area);

}  // namespace pipelab
