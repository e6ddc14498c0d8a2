// A small command-line parser: "--name value" options, repeatable ones, and
// flags, with errors that list the valid options.
#pragma once

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipelab {

// A mistake on the command line; what() is the one line shown to the user.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OptionSpec {
  std::string name;         // without dashes, e.g. "stages"
  bool takes_value = true;  // false: a flag
  bool repeatable = false;  // e.g. --set
};

class ParsedArgs {
 public:
  bool has(const std::string& name) const;
  std::string get(const std::string& name, const std::string& fallback = "") const;
  const std::vector<std::string>& all(const std::string& name) const;  // repeatable options
  // Integer option; UsageError naming the option when it is not an integer in [min, max].
  int get_int(const std::string& name, int fallback, int min, int max) const;

  std::map<std::string, std::vector<std::string>> values;
};

// Throws UsageError for unknown options (listing the valid ones), missing
// values and positional arguments.
ParsedArgs parse_args(const std::string& command, const std::vector<std::string>& args,
                      const std::vector<OptionSpec>& specs);

}  // namespace pipelab
