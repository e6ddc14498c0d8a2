// The live stream of a run (live_server.h sends it, attached_run.h reads it):
// a greeting line, then frames of [uint32 kind][uint64 length][payload]. The
// payloads carry the event stream's own structs as bytes, so both ends must
// be the same PipeLab build; the hello says which (struct sizes and a format
// number) and the reader refuses another in one line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/runtime/executor.h"
#include "core/trace/event_sink.h"

namespace pipelab {

inline constexpr char kLiveGreeting[] = "PIPELAB-LIVE 1\n";

enum class LiveFrame : uint32_t {
  Hello,  // the experiment (JSON text) and the run's step count
  Batch,  // an EventBatch
  End,    // how the run ended (RunState as int32) and its error text
};

struct LiveHello {
  std::string experiment_json;
  int32_t steps_total = 0;
};

std::vector<char> live_hello_frame(const LiveHello& hello);
std::vector<char> live_batch_frame(const EventBatch& batch);
std::vector<char> live_end_frame(int32_t state, const std::string& error);

// The largest frame a reader takes: a batch holds a few thousand events, and
// a stream that announces more is not a PipeLab run's.
inline constexpr uint64_t kLargestLiveFrame = uint64_t{1} << 30;

// Payload readers. The stream comes over the network, so each checks what the
// viewer's views rely on, as a run file's reader does: std::runtime_error,
// one line saying what is wrong, for a payload that is not one (cut short,
// another build, a value out of range).
LiveHello read_live_hello(const char* payload, size_t size);
// `devices`: how many the run's experiment has; every event and memory sample
// must be on one of them.
EventBatch read_live_batch(const char* payload, size_t size, int devices);
// How the run ended (Finished, Stopped or Failed) and its error text.
RunState read_live_end(const char* payload, size_t size, std::string& error);

}  // namespace pipelab
