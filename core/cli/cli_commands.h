// The individual pipelab-cli commands; run_cli() dispatches to them.
// Each throws UsageError or ExperimentError for mistakes a user can fix.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "core/cli/cli.h"

namespace pipelab {

int command_schedule(const std::vector<std::string>& args, std::ostream& out);
int command_simulate(const std::vector<std::string>& args, std::ostream& out);
int command_validate(const std::vector<std::string>& args, std::ostream& out);
int command_plan(const std::vector<std::string>& args, std::ostream& out);
int command_calibrate(const std::vector<std::string>& args, std::ostream& out);
int command_devices(const std::vector<std::string>& args, std::ostream& out, const CliHooks& hooks);
int command_train(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                  const CliHooks& hooks);

}  // namespace pipelab
