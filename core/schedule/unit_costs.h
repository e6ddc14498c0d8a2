// Unit costs for teaching: what each op family costs in abstract units, when an
// experiment predicts in units (simulation.profile "unit") instead of FLOPs and
// a device profile. A plain value, so experiment files can hold it without
// knowing the simulator.
#pragma once

namespace pipelab {

struct UnitCosts {
  double f = 1.0;     // forward
  double b = 1.0;     // backward, input-gradient part
  double w = 1.0;     // backward, weight-gradient part (a fused B costs b + w)
  double comm = 0.0;  // any communication op
  double u = 0.0;     // optimizer step
};

}  // namespace pipelab
