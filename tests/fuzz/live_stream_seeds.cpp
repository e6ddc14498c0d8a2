// Writes seed streams for live_stream_fuzz into the folder given: for a few
// examples, what `pipelab-cli train --serve` would send (greeting, hello,
// batches of the predicted run's events, memory and steps, end). They are
// written by the fuzz build itself because a batch carries the build's
// structs as bytes.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/io/experiment_io.h"
#include "core/sim/experiment_prediction.h"
#include "core/live/live_frames.h"

namespace {

using namespace pipelab;

void append(std::vector<char>& stream, const std::vector<char>& frame) {
  stream.insert(stream.end(), frame.begin(), frame.end());
}

std::vector<char> stream_of(const Experiment& experiment) {
  const Prediction prediction = predict_experiment(experiment);
  const Trace& trace = prediction.result.trace;
  std::vector<char> stream(kLiveGreeting, kLiveGreeting + sizeof kLiveGreeting - 1);
  append(stream, live_hello_frame({experiment_to_json(experiment), experiment.training.steps}));
  // Two batches, as a run sends what it recorded since the last one.
  EventBatch first;
  EventBatch second;
  for (size_t i = 0; i < trace.events.size(); ++i)
    (i < trace.events.size() / 2 ? first : second).events.push_back(trace.events[i]);
  for (size_t i = 0; i < trace.memory.size() && i < 64; ++i) first.memory.push_back(trace.memory[i]);
  StepMetrics step;
  step.t_end = prediction.result.makespan;
  step.loss = 2.5;
  step.step_time_s = prediction.result.makespan;
  step.expert_load = {{1, {5, 3}, {0, 1}}};
  second.steps.push_back(step);
  second.messages.push_back("step 1 done");
  append(stream, live_batch_frame(first));
  append(stream, live_batch_frame(second));
  append(stream, live_end_frame(static_cast<int32_t>(RunState::Finished), ""));
  return stream;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: live_stream_seeds FOLDER\n");
    return 2;
  }
  const std::string folder = argv[1];
  const std::vector<std::string> examples = {"tensor_parallel.json", "mnist_interleaved.json",
                                             "moe_expert_parallel.json", "teacher_zb_h1.json"};
  int written = 0;
  for (const std::string& name : examples) {
    Experiment experiment = load_experiment_unvalidated(std::string(PIPELAB_SOURCE_DIR) + "/examples/" + name);
    experiment.training.steps = 2;
    const std::vector<char> stream = stream_of(experiment);
    std::ofstream out(folder + "/seed-" + name.substr(0, name.size() - 5) + ".bin", std::ios::binary);
    out.write(stream.data(), static_cast<std::streamsize>(stream.size()));
    written += out.good() ? 1 : 0;
  }
  std::printf("live_stream_seeds: %d streams in %s\n", written, folder.c_str());
  return written == static_cast<int>(examples.size()) ? 0 : 1;
}
