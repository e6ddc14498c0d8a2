// BackgroundJob: runs one function on its own std::thread and hands the result
// to the GUI thread. The inputs reach the thread through its creation and the
// result comes back under a std::mutex, both orderings ThreadSanitizer sees
// (a QThreadPool handoff goes through Qt's uninstrumented futexes, which made
// TSan report the job's copied inputs as races). The GUI hears of the end
// through a queued call that carries no data.
#pragma once

#include <QMetaObject>
#include <QObject>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace pipelab {

template <typename Result>
class BackgroundJob {
 public:
  // `receiver` lives on the GUI thread; `finished` runs there, once per start.
  BackgroundJob(QObject* receiver, std::function<void()> finished)
      : receiver_(receiver), finished_(std::move(finished)) {}
  ~BackgroundJob() { wait(); }
  BackgroundJob(const BackgroundJob&) = delete;
  BackgroundJob& operator=(const BackgroundJob&) = delete;

  // Starts `work` (which owns copies of everything it reads). One job at a time.
  void start(std::function<Result()> work) {
    wait();
    running_ = true;
    thread_ = std::thread([this, work = std::move(work)]() mutable {
      Result result = work();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        result_ = std::move(result);
      }
      QMetaObject::invokeMethod(receiver_, [this] { running_ = false; finished_(); }, Qt::QueuedConnection);
    });
  }

  bool isRunning() const { return running_; }

  // Blocks until the thread is done (its queued notification may still come).
  void wait() {
    if (thread_.joinable()) thread_.join();
  }

  // The newest result, once: empty when it was taken already (a job started
  // while another ran leaves two notifications and one result to take).
  std::optional<Result> take() {
    wait();
    std::lock_guard<std::mutex> lock(mutex_);
    std::optional<Result> result = std::move(result_);
    result_.reset();
    return result;
  }

 private:
  QObject* receiver_;
  std::function<void()> finished_;
  std::thread thread_;
  std::mutex mutex_;
  std::optional<Result> result_;
  bool running_ = false;  // GUI thread only
};

}  // namespace pipelab
