// Fuzz target: the bytes a viewer (pipelab --attach HOST:PORT) reads from a
// run's live stream, read by the same LiveStreamReader. What it accepts must
// make a measured trace that the app can sum up (run_statistics) and replay on
// the experiment's schedule (as ReplayUpdater does); what it refuses, it must
// say in one safe line. Seeds: live_stream_seeds writes real streams, since
// their bytes are this build's structs.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <stdexcept>

#include "core/sim/experiment_prediction.h"
#include "core/live/live_stream_reader.h"
#include "core/sim/replay.h"
#include "core/trace/run_statistics.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pipelab;
  size_t offset = 0;
  LiveStreamReader reader([&](char* into, size_t count) {
    if (count > size - offset) return false;
    std::memcpy(into, data + offset, count);
    offset += count;
    return true;
  });
  Trace trace;
  trace.source = "measured";
  try {
    reader.read_start();
    const ParallelPlan& plan = reader.experiment().parallel;
    trace.devices = describe_devices(plan.dp, plan.tp, plan.pp, plan.chunks, plan.layout().v_shape);
    for (;;) {
      const LiveStreamReader::Next next = reader.next();
      if (next.kind != LiveStreamReader::Next::Kind::Batch) break;
      append_batch(trace, next.batch);
    }
  } catch (const std::runtime_error& error) {
    fuzz::require_safe_message(error.what());
  }
  if (trace.devices.empty()) return 0;  // refused at the start
  run_statistics(trace);
  Experiment experiment = reader.experiment();
  if (!fuzz::small_enough_to_simulate(experiment.parallel, 0)) return 0;
  if (experiment.simulation.profile == "unit") experiment.simulation.profile = "cpu-core";
  const Prediction prediction = predict_experiment(experiment);
  try {
    replay_measured(prediction.schedule, trace, prediction.cost);
  } catch (const std::exception& error) {
    fuzz::require_safe_message(error.what());  // the app shows it beside the timeline
  }
  return 0;
}
