#include "core/runtime/weight_stash.h"

namespace pipelab {

// Compiled once here for the CPU executor; other parameter types instantiate
// the header's definitions where they use them.
template class BasicWeightStash<Parameter>;

}  // namespace pipelab
