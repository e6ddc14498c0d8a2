#include "ui/panels/formula_words.h"

#include <QCoreApplication>

namespace pipelab {

QString formula_in_words(const std::string& formula) {
  // core/sim/bubble_formula.cpp's words, each with its translation's source.
  struct Words {
    const char* english;
    const char* text;
  };
  static const Words kWords[] = {
      {" for m>=p", QT_TRANSLATE_NOOP("pipelab::FormulaWords", " for m>=p")},
      {" for m<p", QT_TRANSLATE_NOOP("pipelab::FormulaWords", " for m<p")},
      {" (steady state)", QT_TRANSLATE_NOOP("pipelab::FormulaWords", " (steady state)")},
  };
  QString text = QString::fromStdString(formula);
  for (const Words& words : kWords)
    text.replace(QLatin1String(words.english),
                 QCoreApplication::translate("pipelab::FormulaWords", words.text));
  return text;
}

}  // namespace pipelab
