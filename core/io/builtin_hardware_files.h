// The hardware catalogue's files (hardware/devices/*.json, hardware/nodes/*.json)
// as compiled into the program: core/CMakeLists.txt writes their text into
// builtin_hardware_files.cpp from builtin_hardware_files.cpp.in at configure
// time, so the CLI and the app find them from any working directory.
#pragma once

#include <vector>

namespace pipelab {

struct BuiltinHardwareFile {
  const char* kind;  // "devices" or "nodes": the folder it comes from
  const char* id;    // its name without ".json"
  const char* text;  // the file's JSON
};

const std::vector<BuiltinHardwareFile>& builtin_hardware_files();

}  // namespace pipelab
