// LiveServer: serves a run's event stream over TCP while it trains
// (pipelab-cli train --serve PORT; under mpirun, rank 0), so the app can
// attach to it (pipelab --attach HOST:PORT, attached_run.h) and draw the
// timeline, memory and loss live as for a local run. A viewer that joins
// late gets everything from the start. Only the IPv4 addresses of the allow
// list may watch (by default this machine's 127.0.0.1); others are refused
// and noted. Frames: live_frames.h.
#pragma once

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/runtime/executor.h"
#include "core/live/live_frames.h"

namespace pipelab {

class LiveServer {
 public:
  // Listens on `port` (0: any free port) of every IPv4 interface. Throws
  // std::runtime_error saying why it cannot (the port is taken, ...), or
  // std::invalid_argument for an allow-list entry that is not an IPv4 address.
  LiveServer(int port, const std::vector<std::string>& allowed, const LiveHello& hello);
  ~LiveServer();
  LiveServer(const LiveServer&) = delete;
  LiveServer& operator=(const LiveServer&) = delete;

  int port() const { return port_; }
  void publish(const EventBatch& batch);
  // The last frame; waits (at most 2 s) for the viewers to take everything.
  void end(RunState state, const std::string& error);
  // What happened that the run's log should say (refused viewers).
  std::vector<std::string> take_notes();

 private:
  struct Viewer {
    int fd = -1;
    size_t sent = 0;
  };
  void run();
  void accept_viewer();
  void send_to_viewers();
  bool all_sent() const;

  int listen_fd_ = -1;
  int port_ = 0;
  std::vector<uint32_t> allowed_;  // network byte order
  std::vector<Viewer> viewers_;    // the thread's

  mutable std::mutex mutex_;
  std::vector<char> history_;  // the greeting and every frame so far
  std::vector<std::string> notes_;
  bool stopping_ = false;
  std::thread thread_;
};

// "127.0.0.1,10.0.0.7" as a list (empty entries dropped).
std::vector<std::string> split_allow_list(const std::string& text);

}  // namespace pipelab
