#include "core/live/attached_run.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

#include "core/live/live_stream_error.h"

namespace pipelab {
namespace {

int connect_to(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size())
    throw LiveStreamError("--attach " + address + ": write HOST:PORT (e.g. localhost:7300)");
  const std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int code = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); code != 0)
    throw LiveStreamError("--attach " + address + ": " + ::gai_strerror(code));
  int fd = -1;
  std::string why = "no address";
  for (addrinfo* at = found; at && fd < 0; at = at->ai_next) {
    fd = ::socket(at->ai_family, at->ai_socktype, at->ai_protocol);
    if (fd >= 0 && ::connect(fd, at->ai_addr, at->ai_addrlen) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0)
    throw LiveStreamError(
        "--attach " + address + ": " + why +
        " (is pipelab-cli train --serve running there, and does its --serve-allow list you?)");
  return fd;
}

}  // namespace

AttachedRun::AttachedRun(const std::string& address, EventSink& sink)
    : address_(address),
      sink_(sink),
      stream_([this](char* into, size_t size) { return read_exactly(into, size); }) {
  fd_ = connect_to(address);
  try {
    stream_.read_start();
  } catch (const std::exception& error) {
    ::close(fd_);
    throw LiveStreamError("--attach " + address + ": " + error.what());
  }
}

AttachedRun::~AttachedRun() {
  stop();
  ::close(fd_);
}

void AttachedRun::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (state_ != RunState::Ready) return;
  state_ = RunState::Running;
  sink_.add_message("attached to the run at " + address_);
  reader_ = std::thread([this] { read_stream(); });
}

void AttachedRun::stop() {
  end(RunState::Stopped, "");  // first: the reader's end at the shutdown does not count
  ::shutdown(fd_, SHUT_RDWR);  // ends the reader's wait
  if (reader_.joinable()) reader_.join();
}

void AttachedRun::wait() {
  if (reader_.joinable()) reader_.join();
}

void AttachedRun::abort(const std::string& message) {
  end(RunState::Failed, message);
  ::shutdown(fd_, SHUT_RDWR);
}

RunState AttachedRun::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

std::string AttachedRun::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

bool AttachedRun::read_exactly(char* into, size_t size) {
  while (size > 0) {
    const ssize_t got = ::recv(fd_, into, size, 0);
    if (got <= 0) return false;
    into += got;
    size -= static_cast<size_t>(got);
  }
  return true;
}

void AttachedRun::end(RunState state, const std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (state_ == RunState::Finished || state_ == RunState::Stopped || state_ == RunState::Failed)
    return;
  state_ = state;
  error_ = error;
}

void AttachedRun::read_stream() {
  try {
    for (;;) {
      LiveStreamReader::Next next = stream_.next();
      if (next.kind == LiveStreamReader::Next::Kind::Closed) break;
      if (next.kind == LiveStreamReader::Next::Kind::End) {
        end(next.state, next.error);
        return;
      }
      const EventBatch& batch = next.batch;
      for (const TraceEvent& event : batch.events) sink_.add_event(event);
      for (const MemorySample& sample : batch.memory) sink_.add_memory(sample);
      for (const StepMetrics& metrics : batch.steps) sink_.add_step(metrics);
      for (const std::string& message : batch.messages) sink_.add_message(message);
      steps_done_ += static_cast<int>(batch.steps.size());
    }
  } catch (const std::exception& error) {
    end(RunState::Failed, "--attach " + address_ + ": " + error.what());
    return;
  }
  end(RunState::Failed, "the connection to the run at " + address_ + " was lost");
}

}  // namespace pipelab
