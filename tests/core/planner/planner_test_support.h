// A small experiment whose layers differ in cost, for planner tests.
#pragma once

#include <string>

#include "core/io/experiment_io.h"

namespace pipelab::test {

// Six layers of uneven widths on cpu-core; 8 micro-batches of 4 samples a step.
inline Experiment uneven_mlp() {
  return parse_experiment(R"({
    "name": "uneven MLP",
    "model": {"input": [2],
              "layers": [{"type": "linear", "out": 256}, {"type": "relu"},
                         {"type": "linear", "out": 512}, {"type": "tanh"},
                         {"type": "linear", "out": 64}, {"type": "linear", "out": 3}],
              "loss": "cross_entropy"},
    "training": {"batch_size": 32, "optimizer": {"type": "sgd", "lr": 0.1, "momentum": 0.9}},
    "parallel": {"dp": 1, "pp": 1, "microbatches": 8, "schedule": "1f1b"},
    "simulation": {"profile": "cpu-core"}})");
}

}  // namespace pipelab::test
