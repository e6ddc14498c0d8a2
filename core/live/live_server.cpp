#include "core/live/live_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace pipelab {

std::vector<std::string> split_allow_list(const std::string& text) {
  std::vector<std::string> entries;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t comma = text.find(',', begin);
    const std::string entry =
        text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (!entry.empty()) entries.push_back(entry);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return entries;
}

LiveServer::LiveServer(int port, const std::vector<std::string>& allowed, const LiveHello& hello) {
  for (const std::string& address : allowed) {
    in_addr parsed{};
    if (inet_pton(AF_INET, address.c_str(), &parsed) != 1)
      throw std::invalid_argument("--serve-allow: '" + address +
                                  "' is not an IPv4 address (e.g. 127.0.0.1)");
    allowed_.push_back(parsed.s_addr);
  }
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listen_fd_ < 0)
    throw std::runtime_error(std::string("live view: no socket: ") + std::strerror(errno));
  const int yes = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t length = sizeof address;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listen_fd_, 8) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string why = std::strerror(errno);
    ::close(listen_fd_);
    throw std::runtime_error("live view: cannot listen on port " + std::to_string(port) + ": " +
                             why + " (pick another with --serve PORT, or 0 for any free one)");
  }
  port_ = ntohs(address.sin_port);
  history_.assign(kLiveGreeting, kLiveGreeting + sizeof kLiveGreeting - 1);
  const std::vector<char> frame = live_hello_frame(hello);
  history_.insert(history_.end(), frame.begin(), frame.end());
  thread_ = std::thread([this] { run(); });
}

LiveServer::~LiveServer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  thread_.join();
  for (const Viewer& viewer : viewers_) ::close(viewer.fd);
  ::close(listen_fd_);
}

void LiveServer::publish(const EventBatch& batch) {
  if (batch.empty()) return;
  const std::vector<char> frame = live_batch_frame(batch);
  std::lock_guard<std::mutex> lock(mutex_);
  history_.insert(history_.end(), frame.begin(), frame.end());
}

void LiveServer::end(RunState state, const std::string& error) {
  const std::vector<char> frame = live_end_frame(static_cast<int32_t>(state), error);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    history_.insert(history_.end(), frame.begin(), frame.end());
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!all_sent() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

std::vector<std::string> LiveServer::take_notes() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> notes;
  notes.swap(notes_);
  return notes;
}

bool LiveServer::all_sent() const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Viewer& viewer : viewers_)
    if (viewer.sent < history_.size()) return false;
  return true;
}

void LiveServer::run() {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
    }
    pollfd listening{listen_fd_, POLLIN, 0};
    if (::poll(&listening, 1, 20) > 0) accept_viewer();
    send_to_viewers();
  }
}

void LiveServer::accept_viewer() {
  sockaddr_in from{};
  socklen_t length = sizeof from;
  const int fd = ::accept(listen_fd_, reinterpret_cast<sockaddr*>(&from), &length);
  if (fd < 0) return;
  bool allowed = false;
  for (uint32_t address : allowed_) allowed = allowed || address == from.sin_addr.s_addr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!allowed) {
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &from.sin_addr, text, sizeof text);
    notes_.push_back(std::string("live view: refused a viewer from ") + text +
                     " (not in --serve-allow)");
    ::close(fd);
    return;
  }
  viewers_.push_back({fd, 0});
}

void LiveServer::send_to_viewers() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = viewers_.begin(); it != viewers_.end();) {
    bool gone = false;
    while (it->sent < history_.size()) {
      const ssize_t sent = ::send(it->fd, history_.data() + it->sent, history_.size() - it->sent,
                                  MSG_DONTWAIT | MSG_NOSIGNAL);
      if (sent > 0) {
        it->sent += static_cast<size_t>(sent);
        continue;
      }
      gone = !(sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));  // else: full, later
      break;
    }
    if (gone) {
      ::close(it->fd);
      it = viewers_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace pipelab
