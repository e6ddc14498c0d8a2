// Pretty JSON for files people read and edit: nested objects indented, small
// flat values (a shape, one layer, the unit costs) kept on one line. Internal
// to core/io.
#pragma once

#include <string>

#include "core/io/json_reader.h"

namespace pipelab {

std::string format_json(const Json& value);

}  // namespace pipelab
