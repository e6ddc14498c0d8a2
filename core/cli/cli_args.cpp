#include "core/cli/cli_args.h"

#include <charconv>

#include "core/text/quoted_excerpt.h"

namespace pipelab {

bool ParsedArgs::has(const std::string& name) const { return values.count(name) > 0; }

std::string ParsedArgs::get(const std::string& name, const std::string& fallback) const {
  auto it = values.find(name);
  if (it == values.end() || it->second.empty()) return fallback;
  return it->second.back();
}

const std::vector<std::string>& ParsedArgs::all(const std::string& name) const {
  static const std::vector<std::string> kNone;
  auto it = values.find(name);
  return it == values.end() ? kNone : it->second;
}

int ParsedArgs::get_int(const std::string& name, int fallback, int min, int max) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    throw UsageError("--" + name + " must be an integer, got " + quoted_excerpt(text));
  if (value < min || value > max)
    throw UsageError("--" + name + " = " + text + " is out of range; use " + std::to_string(min) +
                     ".." + std::to_string(max));
  return value;
}

ParsedArgs parse_args(const std::string& command, const std::vector<std::string>& args,
                      const std::vector<OptionSpec>& specs) {
  auto valid_list = [&] {
    std::string list;
    for (const auto& spec : specs) list += (list.empty() ? "--" : ", --") + spec.name;
    return list;
  };
  ParsedArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0)
      throw UsageError("unexpected argument " + quoted_excerpt(arg) + " for '" + command + "'; options: " +
                       valid_list());
    std::string name = arg.substr(2);
    std::string value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    const OptionSpec* spec = nullptr;
    for (const auto& candidate : specs)
      if (candidate.name == name) spec = &candidate;
    if (!spec)
      throw UsageError("unknown option " + quoted_excerpt("--" + name) + " for '" + command + "'; valid: " +
                       valid_list());
    if (spec->takes_value && !inline_value) {
      if (i + 1 >= args.size()) throw UsageError("--" + name + " needs a value");
      value = args[++i];
    }
    if (!spec->takes_value && inline_value) throw UsageError("--" + name + " takes no value");
    auto& slot = parsed.values[name];
    if (!slot.empty() && !spec->repeatable)
      throw UsageError("--" + name + " is given twice; give it once");
    slot.push_back(value);
  }
  return parsed;
}

}  // namespace pipelab
