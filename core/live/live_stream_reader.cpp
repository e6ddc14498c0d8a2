#include "core/live/live_stream_reader.h"

#include <algorithm>
#include <stdexcept>

#include "core/io/experiment_io.h"
#include "core/live/live_frames.h"
#include "core/live/live_stream_error.h"

namespace pipelab {

bool LiveStreamReader::read_frame(uint32_t& kind) {
  uint64_t size = 0;
  if (!read_(reinterpret_cast<char*>(&kind), sizeof kind) ||
      !read_(reinterpret_cast<char*>(&size), sizeof size) || size > kLargestLiveFrame)
    return false;
  // Grown as the bytes arrive: a size alone claims no memory.
  constexpr uint64_t kChunk = uint64_t{1} << 20;
  payload_.clear();
  while (payload_.size() < size) {
    const size_t have = payload_.size();
    const size_t more = static_cast<size_t>(std::min<uint64_t>(kChunk, size - have));
    payload_.resize(have + more);
    if (!read_(payload_.data() + have, more)) return false;
  }
  return true;
}

void LiveStreamReader::read_start() {
  std::string greeting(sizeof kLiveGreeting - 1, '\0');
  uint32_t kind = 0;
  if (!read_(greeting.data(), greeting.size()) || greeting != kLiveGreeting ||
      !read_frame(kind) || kind != static_cast<uint32_t>(LiveFrame::Hello))
    throw LiveStreamError("not a PipeLab run's live stream (or it refused us)");
  const LiveHello hello = read_live_hello(payload_.data(), payload_.size());
  try {
    experiment_ = parse_experiment_unvalidated(hello.experiment_json);
  } catch (const std::exception& error) {
    throw LiveStreamError(std::string("the experiment it sent does not read: ") + error.what());
  }
  // The views lay out the run's devices from its plan.
  const std::vector<std::string> problems = validate_experiment(experiment_);
  if (!problems.empty())
    throw LiveStreamError("the experiment it sent is not valid: " + problems.front());
  steps_total_ = hello.steps_total;
  devices_ = experiment_.parallel.devices();
}

LiveStreamReader::Next LiveStreamReader::next() {
  Next next;
  uint32_t kind = 0;
  // A frame of a kind this build does not know is passed over, as it was before.
  while (read_frame(kind)) {
    if (kind == static_cast<uint32_t>(LiveFrame::Batch)) {
      next.kind = Next::Kind::Batch;
      next.batch = read_live_batch(payload_.data(), payload_.size(), devices_);
      return next;
    }
    if (kind == static_cast<uint32_t>(LiveFrame::End)) {
      next.kind = Next::Kind::End;
      next.state = read_live_end(payload_.data(), payload_.size(), next.error);
      return next;
    }
  }
  return next;  // Closed
}

}  // namespace pipelab
