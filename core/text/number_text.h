// Numbers in messages: the shortest text that reads back as the same number,
// 0.05 (not 0.050000), 1 (not 1.0), 500000, 1e+20.
#pragma once

#include <string>

namespace pipelab {

std::string number_text(double value);

}  // namespace pipelab
