// AttachedRun: a run that trains elsewhere (pipelab-cli train --serve, often
// rank 0 of an mpirun job), seen through its live stream (live_server.h) as
// an Executor: its events, memory samples, step metrics and messages arrive
// in the EventSink as a local run's do, so the app draws it the same way
// (pipelab --attach HOST:PORT). A viewer cannot steer the run: pause, resume
// and step do nothing, stop only detaches.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>

#include "core/io/experiment.h"
#include "core/runtime/executor.h"
#include "core/live/live_stream_reader.h"
#include "core/trace/event_sink.h"

namespace pipelab {

class AttachedRun final : public Executor {
 public:
  // Connects to `address` ("HOST:PORT") and reads the run's hello. Throws
  // std::runtime_error saying what failed (no such host, refused, not a
  // PipeLab run, another build, an experiment that is not valid).
  AttachedRun(const std::string& address, EventSink& sink);
  ~AttachedRun() override;

  // The experiment the run trains, as it sent it.
  const Experiment& experiment() const { return stream_.experiment(); }

  void start() override;  // starts reading the stream
  void pause() override {}
  void resume() override {}
  void step() override {}
  void stop() override;  // detaches; the run goes on
  void wait() override;
  void abort(const std::string& message) override;
  RunState state() const override;
  std::string error() const override;
  int steps_done() const override { return steps_done_.load(); }
  int steps_total() const override { return stream_.steps_total(); }

 private:
  void read_stream();
  // Reads exactly `size` bytes; false when the connection ends first.
  bool read_exactly(char* into, size_t size);
  void end(RunState state, const std::string& error);

  const std::string address_;
  EventSink& sink_;
  int fd_ = -1;
  LiveStreamReader stream_;  // reads from fd_
  std::atomic<int> steps_done_{0};
  mutable std::mutex mutex_;
  RunState state_ = RunState::Ready;
  std::string error_;
  std::thread reader_;
};

}  // namespace pipelab
