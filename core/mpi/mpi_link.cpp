#include "core/mpi/mpi_link.h"

#include <chrono>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "core/mpi/mpi_call.h"
#include "core/mpi/mpi_transport.h"
#include "core/comm/byte_buffer.h"

namespace pipelab::mpi {
namespace {

constexpr int kLinkTag = 1;  // every message of the link (clock pings use their own)

// What a tensor message carries before its floats; a multiple of 8 bytes, so
// the floats of a received buffer are aligned.
struct TensorHeader {
  int32_t to = 0;
  int32_t unused = 0;
  MessageTag tag;
  int64_t rows = 0;
  int64_t cols = 0;
};
static_assert(sizeof(TensorHeader) % 8 == 0);

}  // namespace

MpiLink::MpiLink(MPI_Comm comm, const ProcessShare& share, double silence_limit_s)
    : comm_(comm), share_(share), silence_limit_s_(silence_limit_s) {}

MpiLink::~MpiLink() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_.empty()) failure_ = "rank " + std::to_string(share_.rank) + " left the run";
  }
  changed_.notify_all();
  thread_.join();
}

std::unique_ptr<Transport> MpiLink::wrap(InProcessTransport& local) {
  local_ = &local;
  return std::make_unique<MpiTransport>(local, *this);
}

void MpiLink::start(ThreadedExecutor& executor, std::vector<ClockOffset> offsets) {
  executor_ = &executor;
  offsets_ = std::move(offsets);
  const double now = steady_seconds();
  last_heard_.assign(static_cast<size_t>(share_.ranks), now);
  done_.assign(static_cast<size_t>(share_.ranks), 0);
  thread_ = std::thread([this] { run(); });
}

std::string MpiLink::finish(const std::string& local_failure) {
  std::unique_lock<std::mutex> lock(mutex_);
  local_done_ = true;
  local_failure_ = local_failure;
  changed_.notify_all();
  changed_.wait(lock, [&] { return ended_; });
  lock.unlock();
  thread_.join();
  lock.lock();
  return failure_;
}

void MpiLink::send_tensor(int to, const MessageTag& tag, const float* values, int64_t rows,
                          int64_t cols) {
  const int64_t bytes = rows * cols * static_cast<int64_t>(sizeof(float));
  if (bytes >
      std::numeric_limits<int>::max() - static_cast<int64_t>(sizeof(Header) + sizeof(TensorHeader)))
    throw std::runtime_error(
        "a message of " + std::to_string(bytes) +
        " bytes is over MPI's 2 GiB limit for one message; use more micro-batches");
  std::vector<char> payload;
  payload.reserve(sizeof(TensorHeader) + static_cast<size_t>(bytes));
  append_bytes(payload, TensorHeader{to, 0, tag, rows, cols});
  const char* data = reinterpret_cast<const char*>(values);
  payload.insert(payload.end(), data, data + bytes);
  queue(to / share_.device_count, Kind::Tensor, std::move(payload));
}

void MpiLink::queue(int to_rank, Kind kind, std::vector<char> payload, double origin) {
  Outgoing message;
  message.to_rank = to_rank;
  message.bytes.reserve(sizeof(Header) + payload.size());
  append_bytes(message.bytes, Header{kind, share_.rank, origin});
  message.bytes.insert(message.bytes.end(), payload.begin(), payload.end());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(message));
  }
  changed_.notify_all();
}

bool MpiLink::exiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !failure_.empty() || finish_sent_ || finish_received_;
}

void MpiLink::run() {
  try {
    while (!exiting()) loop_once();
  } catch (const std::exception& error) {
    fail(error.what(), true);
  }
  // Let the last messages (the finish, a failure) leave, for at most a second:
  // a rank that stopped answering may never take them.
  const double deadline = steady_seconds() + 1.0;
  try {
    post_queued();
    while (!in_flight_.empty() && steady_seconds() < deadline) {
      reap_sends();
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  } catch (const std::exception&) {
    // Already failing or finished: nothing more to tell.
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ended_ = true;
  changed_.notify_all();
}

void MpiLink::loop_once() {
  post_queued();
  reap_sends();
  receive_arrived();
  if (share_.rank != 0) {
    std::vector<char> reports = reports_.take();
    if (!reports.empty())
      queue(0, Kind::Reports, std::move(reports), executor_->clock().origin_seconds());
  }
  send_heartbeats();
  check_silence();
  follow_protocol();
  // Nothing to send: wait a little for a worker's message (or what arrives).
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_for(lock, std::chrono::microseconds(50),
                    [&] { return !queue_.empty() || !failure_.empty() || local_done_; });
}

void MpiLink::post_queued() {
  std::deque<Outgoing> taken;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    taken.swap(queue_);
  }
  for (Outgoing& message : taken) {
    in_flight_.push_back({MPI_REQUEST_NULL, std::move(message.bytes)});
    InFlight& sending = in_flight_.back();
    check(MPI_Isend(sending.bytes.data(), static_cast<int>(sending.bytes.size()), MPI_BYTE,
                    message.to_rank, kLinkTag, comm_, &sending.request),
          "MPI_Isend to rank " + std::to_string(message.to_rank), share_.rank);
  }
}

void MpiLink::reap_sends() {
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    int done = 0;
    check(MPI_Test(&it->request, &done, MPI_STATUS_IGNORE), "MPI_Test (a send)", share_.rank);
    it = done ? in_flight_.erase(it) : std::next(it);
  }
}

void MpiLink::receive_arrived() {
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    check(MPI_Iprobe(MPI_ANY_SOURCE, kLinkTag, comm_, &arrived, &status), "MPI_Iprobe",
          share_.rank);
    if (!arrived) return;
    int count = 0;
    check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count", share_.rank);
    std::vector<char> bytes(static_cast<size_t>(count));
    const int from = status.MPI_SOURCE;
    check(MPI_Recv(bytes.data(), count, MPI_BYTE, from, kLinkTag, comm_, MPI_STATUS_IGNORE),
          "MPI_Recv from rank " + std::to_string(from), share_.rank);
    last_heard_[static_cast<size_t>(from)] = steady_seconds();
    handle(from, bytes);
  }
}

void MpiLink::handle(int from, const std::vector<char>& bytes) {
  ByteReader reader(bytes.data(), bytes.size());
  const Header header = reader.read<Header>();
  const size_t rest = bytes.size() - sizeof(Header);
  switch (header.kind) {
    case Kind::Tensor: {
      const TensorHeader tensor = reader.read<TensorHeader>();
      if (!share_.hosts(tensor.to) || tensor.rows < 0 || tensor.cols < 0 ||
          rest - sizeof(TensorHeader) !=
              static_cast<size_t>(tensor.rows * tensor.cols) * sizeof(float))
        throw std::runtime_error("rank " + std::to_string(share_.rank) +
                                 ": a malformed tensor from rank " + std::to_string(from));
      const char* values = reader.take(rest - sizeof(TensorHeader));
      local_->post(tensor.to, tensor.tag, reinterpret_cast<const float*>(values), tensor.rows,
                   tensor.cols);
      break;
    }
    case Kind::Reports: {
      const double origin = header.origin;
      const ClockOffset offset = offsets_.at(static_cast<size_t>(from));
      const double reference_origin = executor_->clock().origin_seconds();
      replay_reports(reader.take(rest), rest, executor_->recorder(), [&](double time) {
        return on_reference_clock(time, origin, offset, reference_origin);
      });
      break;
    }
    case Kind::Heartbeat:
      break;
    case Kind::Done:
      done_.at(static_cast<size_t>(from)) = 1;
      break;
    case Kind::Finish: {
      std::lock_guard<std::mutex> lock(mutex_);
      finish_received_ = true;
      break;
    }
    case Kind::Failure:
      fail(std::string(reader.take(rest), rest), false);
      break;
    default:
      throw std::runtime_error("rank " + std::to_string(share_.rank) +
                               ": an unknown message from rank " + std::to_string(from));
  }
}

void MpiLink::send_heartbeats() {
  const double now = steady_seconds();
  if (now < next_heartbeat_) return;
  next_heartbeat_ = now + std::min(0.5, silence_limit_s_ / 5);
  for (int rank = 0; rank < share_.ranks; ++rank)
    if (rank != share_.rank) queue(rank, Kind::Heartbeat, {});
}

void MpiLink::check_silence() {
  const double now = steady_seconds();
  for (int rank = 0; rank < share_.ranks; ++rank) {
    if (rank == share_.rank || now - last_heard_[static_cast<size_t>(rank)] <= silence_limit_s_)
      continue;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", now - last_heard_[static_cast<size_t>(rank)]);
    fail("rank " + std::to_string(rank) + " has not answered for " + seconds +
             " s (it died, stopped or its network is cut); stopping the run",
         true);
    return;
  }
}

void MpiLink::follow_protocol() {
  bool local_done = false;
  std::string local_failure;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    local_done = local_done_;
    local_failure = local_failure_;
  }
  if (!local_failure.empty()) {
    fail("rank " + std::to_string(share_.rank) + " failed: " + local_failure, true);
    return;
  }
  if (!local_done) return;
  if (share_.rank != 0) {
    if (done_sent_) return;
    std::vector<char> reports = reports_.take();  // the last ones, before "done"
    if (!reports.empty())
      queue(0, Kind::Reports, std::move(reports), executor_->clock().origin_seconds());
    queue(0, Kind::Done, {});
    done_sent_ = true;
    return;
  }
  done_[0] = 1;
  for (char done : done_)
    if (!done) return;
  for (int rank = 1; rank < share_.ranks; ++rank) queue(rank, Kind::Finish, {});
  std::lock_guard<std::mutex> lock(mutex_);
  finish_sent_ = true;
}

void MpiLink::fail(const std::string& message, bool tell_others) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_.empty()) return;
    failure_ = message;
  }
  if (tell_others) {
    std::vector<char> text(message.begin(), message.end());
    for (int rank = 0; rank < share_.ranks; ++rank)
      if (rank != share_.rank) queue(rank, Kind::Failure, text);
  }
  if (executor_) executor_->abort(message);
  changed_.notify_all();
}

}  // namespace pipelab::mpi
