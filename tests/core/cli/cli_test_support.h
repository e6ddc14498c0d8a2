// Runs pipelab-cli commands in-process and captures what they print.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "core/cli/cli.h"

namespace pipelab::test {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

inline CliResult run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CliResult result;
  result.code = run_cli(args, out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

inline std::string example(const std::string& name) {
  return std::string(PIPELAB_SOURCE_DIR) + "/examples/" + name;
}

}  // namespace pipelab::test
