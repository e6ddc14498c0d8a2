// Fuzz target: pipelab-cli's command line, one argument per line, for the
// commands that read only their arguments (schedule, simulate without
// --config, help, version, and mistakes). Every run ends in success or a
// usage error with a safe one-line message, never an internal error.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "core/cli/cli.h"
#include "core/cli/cli_args.h"
#include "core/cli/plan_options.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace pipelab;

// Options that read or write files, and commands that train or ask the
// hardware, are left out: they do not parse anything the others do not.
bool touches_outside(const std::vector<std::string>& args) {
  const std::string& command = args.front();
  if (command == "train" || command == "calibrate" || command == "devices") return true;
  for (const std::string& arg : args)
    for (const char* option : {"--config", "--trace", "--csv", "--summary", "--replay-trace", "--save-run"})
      if (arg.rfind(option, 0) == 0) return true;
  return false;
}

// Plans too large to simulate many times a second are skipped (see
// fuzz_support). When the flags do not even parse, the CLI fails as fast.
bool small_plan(const std::vector<std::string>& args) {
  try {
    const ParsedArgs parsed =
        parse_args("fuzz", {args.begin() + 1, args.end()},
                   {{"schedule"}, {"stages"}, {"microbatches"}, {"dp"}, {"tp"}, {"chunks"},
                    {"recompute", false}, {"update"}, {"staleness"}, {"steps"}, {"cost"},
                    {"profile"}, {"set", true, true}, {"format"}});
    return fuzz::small_enough_to_simulate(plan_from_flags(parsed),
                                          parsed.get_int("steps", 0, 0, 64));
  } catch (const UsageError&) {
    return true;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> args = fuzz::split_lines(fuzz::as_text(data, size));
  if (touches_outside(args) || !small_plan(args)) return 0;
  std::ostringstream out;
  std::ostringstream err;
  const int exit_code = run_cli(args, out, err);
  if (exit_code == kExitInternal) __builtin_trap();
  for (const std::string& line : fuzz::split_lines(err.str())) fuzz::require_safe_message(line);
  return 0;
}
