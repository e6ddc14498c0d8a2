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

namespace pipelab::test {

// A small GPT on H100s (predict only): 8 blocks of width 256, 512 positions,
// a batch of 16 sequences; the split search has a few thousand candidates.
inline Experiment small_gpt() {
  return parse_experiment(R"({
    "name": "small GPT",
    "model": {"input": [512],
              "layers": [{"type": "embedding", "vocab": 1024, "dim": 256},
                         {"type": "transformer_block", "heads": 8, "kv_heads": 4, "repeat": 8},
                         {"type": "layernorm"}, {"type": "linear", "out": 1024, "bias": false}],
              "loss": "cross_entropy"},
    "data": {"source": "copy", "samples": 256, "vocab": 1024},
    "training": {"batch_size": 16, "precision": "bf16-mixed",
                 "optimizer": {"type": "adamw", "lr": 1e-3}},
    "parallel": {"dp": 1, "tp": 2, "pp": 2, "microbatches": 8, "schedule": "1f1b"},
    "simulation": {"profile": "h100"}})");
}

}  // namespace pipelab::test
