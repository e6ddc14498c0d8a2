// The live stream of a run (live_server.h sends it, attached_run.h reads it):
// a greeting line, then frames of [uint32 kind][uint64 length][payload]. The
// payloads carry the event stream's own structs as bytes, so both ends must
// be the same PipeLab build; the hello says which (struct sizes and a format
// number) and the reader refuses another in one line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// Payload readers; std::runtime_error for a payload that is not one (or of
// another build).
LiveHello read_live_hello(const char* payload, size_t size);
EventBatch read_live_batch(const char* payload, size_t size);
void read_live_end(const char* payload, size_t size, int32_t& state, std::string& error);

}  // namespace pipelab
