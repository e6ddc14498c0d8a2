#include "core/runtime/rank_session.h"

#include <cstdlib>
#include <string>

namespace pipelab {

int launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* value = std::getenv(name);
    if (!value) continue;
    try {
      const int ranks = std::stoi(value);
      if (ranks >= 1) return ranks;
    } catch (const std::exception&) {
      // Not a number: not a launcher's.
    }
  }
  return 1;
}

}  // namespace pipelab
