// The words in core's bubble formulas ("for m>=p", "(steady state)") in the
// app's language; the math stays as it is.
#pragma once

#include <QString>
#include <string>

namespace pipelab {

QString formula_in_words(const std::string& formula);

}  // namespace pipelab
