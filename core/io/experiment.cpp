#include "core/io/experiment.h"

namespace pipelab {

int64_t microbatch_size(const Experiment& experiment) {
  const ParallelPlan& plan = experiment.parallel;
  if (plan.dp < 1 || plan.microbatches < 1) return 0;  // an invalid plan; validation says why
  return experiment.training.batch_size / plan.dp / plan.microbatches;
}

}  // namespace pipelab
