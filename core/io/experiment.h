// Experiment: everything an experiment file holds. Loading and saving live in
// experiment_io.h; this header is the plain value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/model_spec.h"
#include "core/model/precision.h"
#include "core/plan/parallel_plan.h"
#include "core/schedule/unit_costs.h"

namespace pipelab {

// Where training data comes from. Synthetic sets are generated from the seed.
struct DataSpec {
  std::string source = "spiral";  // mnist, fashion-mnist, idx, csv, spiral, moons,
                                  // circles, xor, blobs, teacher; token sequences:
                                  // text, copy, reverse, sort, add
  std::string path;               // files (mnist/fashion-mnist/idx: folder; csv: file)
                                  // as written; resolved_path is absolute
  std::string resolved_path;      // filled in by load_experiment
  double validation_fraction = 0.2;
  int64_t samples = 2048;         // synthetic sets: how many samples
  int classes = 3;                // synthetic sets
  int features = 2;               // blobs/teacher: input width
  double noise = 0.1;             // synthetic sets
  int64_t limit = 0;              // files: use at most this many samples (0 = all)
  int vocab = 16;                 // copy, reverse, sort, add: token ids (text: the file decides)
  int64_t stride = 0;             // text: characters between windows (0 = the sequence length)
};

struct OptimizerSpec {
  std::string type = "sgd";       // sgd, adam, adamw
  double lr = 0.05;
  double momentum = 0.0;          // sgd
  double beta1 = 0.9;             // adam/adamw
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

// PipeMare's two techniques (Yang et al., MLSys 2021), used by schedule pipemare
// only; the formulas are in core/runtime/pipemare_weights.h.
struct PipeMareSpec {
  bool lr_rescheduling = true;         // T1: a stage's step size over its delay, annealed back
  int lr_warmup_updates = 100;         // K: updates until the step size is training.optimizer.lr again
  bool discrepancy_correction = true;  // T2: a backward reads w - delay * velocity
  double velocity_decay = 0.9;         // gamma of the velocity's running average
};

struct TrainingSpec {
  int64_t batch_size = 64;        // global batch per step (split over dp replicas, then micro-batches)
  int steps = 100;
  OptimizerSpec optimizer;
  int eval_every = 0;             // validate every N steps (0: only at the end)
  Precision precision = Precision::Fp32;
  // Gradients held and data-parallel reduced in float32 under bf16-mixed (4
  // bytes a parameter, 18 with Adam's state: Megatron-LM's default for bf16);
  // false: in the run's precision (the ZeRO paper's 16). The cuda backend
  // holds them in float32 either way; a prediction's setting.
  bool fp32_gradients = false;
  PipeMareSpec pipemare;
};

// Which nodes the simulated run is placed on (core/io/hardware_catalogue.h).
struct ClusterChoice {
  std::string node;  // a node type (id or file); empty: the profile device's own node
  int nodes = 0;     // how many; 0: as many as the run's devices fill

  bool empty() const { return node.empty() && nodes == 0; }
};

struct SimulationSpec {
  std::string profile = "cpu-core";  // a catalogue device (id or file: cpu-core, h100, ...) or "unit"
  ClusterChoice cluster;             // the nodes it sits in
  // Data-parallel gradient all-reduces run in buckets under the backward (as
  // DDP and Megatron-LM's --overlap-grad-reduce do); false: after it. The
  // executors reduce after the backward either way: a prediction's setting.
  bool overlap_grad_reduce = true;
  UnitCosts unit;                    // used when profile == "unit"
};

struct BackendSpec {
  std::string type = "cpu";  // cpu or cuda
  int threads = 0;           // cpu: 0 = one per virtual device
  bool tf32 = false;         // cuda: allow TF32 GEMMs
};

struct Experiment {
  std::string name = "Untitled experiment";
  uint64_t seed = 1;
  ModelSpec model;
  DataSpec data;
  TrainingSpec training;
  ParallelPlan parallel;
  SimulationSpec simulation;
  BackendSpec backend;
  std::string file_path;  // where it was loaded from (empty for a new experiment)
};

// Samples in one micro-batch: batch_size / dp / microbatches.
int64_t microbatch_size(const Experiment& experiment);

}  // namespace pipelab
