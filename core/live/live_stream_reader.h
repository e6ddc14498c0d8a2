// LiveStreamReader: reads a run's live stream (live_frames.h) from any byte
// source: AttachedRun's socket, or a buffer in the tests and the fuzzer
// (tests/fuzz/live_stream_fuzz.cpp). The greeting and the hello come first;
// then batches until the run's end. Everything it returns has been checked
// as the views need it (the experiment valid, every event on one of its
// devices), since the bytes come over the network.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/io/experiment.h"
#include "core/runtime/executor.h"
#include "core/trace/event_sink.h"

namespace pipelab {

class LiveStreamReader {
 public:
  // Fills `into` with exactly `size` bytes; false when the source ends first.
  using ReadExactly = std::function<bool(char* into, size_t size)>;

  explicit LiveStreamReader(ReadExactly read) : read_(std::move(read)) {}

  // The greeting and the hello. std::runtime_error, one line, when the source
  // is not a PipeLab run's live stream (or the server refused the viewer),
  // closes first, is of another build, or sends an experiment that is not valid.
  void read_start();
  const Experiment& experiment() const { return experiment_; }
  int steps_total() const { return steps_total_; }

  // One frame after the hello.
  struct Next {
    enum class Kind { Batch, End, Closed } kind = Kind::Closed;
    EventBatch batch;                   // Batch
    RunState state = RunState::Failed;  // End: how the run ended
    std::string error;                  // End: the run's error text
  };
  // std::runtime_error for a frame that is not one (values out of range too);
  // Closed when the source ends between or inside frames.
  Next next();

 private:
  // A frame's kind and payload; false when the source ends first or the
  // frame is larger than kLargestLiveFrame.
  bool read_frame(uint32_t& kind);

  ReadExactly read_;
  std::vector<char> payload_;
  Experiment experiment_;
  int steps_total_ = 0;
  int devices_ = 0;  // the experiment's: every event must be on one of them
};

}  // namespace pipelab
