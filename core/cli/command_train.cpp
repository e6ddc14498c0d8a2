// pipelab-cli train: real training on the CPU (or CUDA) backend.
#include <ostream>

#include "core/cli/cli_args.h"
#include "core/cli/cli_commands.h"

namespace pipelab {

int command_train(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                  const CliHooks& hooks) {
  (void)args;
  (void)out;
  (void)err;
  (void)hooks;
  throw UsageError("train is not available in this build yet; use simulate to predict a run");
}

}  // namespace pipelab
