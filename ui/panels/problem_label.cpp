#include "ui/panels/problem_label.h"

#include "ui/core_message_text.h"

namespace pipelab {

ProblemLabel::ProblemLabel(QWidget* parent) : QLabel(parent) {
  setWordWrap(true);
  setTextFormat(Qt::PlainText);
  setTextInteractionFlags(Qt::TextSelectableByMouse);
  setStyleSheet(QStringLiteral("QLabel { color: #b00020; }"));
  hide();
}

void ProblemLabel::setProblems(const QStringList& problems) {
  problems_ = problems;
  QStringList lines;
  for (const QString& problem : problems)
    lines << QStringLiteral("⚠ ") + core_message_text(problem);
  setText(lines.join('\n'));
  setVisible(!problems.isEmpty());
}

}  // namespace pipelab
