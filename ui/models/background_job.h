// BackgroundJob: runs one function on its own std::thread and hands the result
// to the GUI thread. Every handoff is one ThreadSanitizer sees: the inputs
// reach the thread through its creation, the result comes back under a
// std::mutex, and the GUI learns of the end by polling an atomic flag from a
// QTimer, then joins the thread. (Handing work to a QThreadPool, or posting a
// queued call from the thread, goes through Qt's uninstrumented futexes, and
// TSan then reports whatever crossed as a race.)
#pragma once

#include <QObject>
#include <QTimer>
#include <atomic>
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
  BackgroundJob(QObject* receiver, std::function<void()> finished) : finished_(std::move(finished)) {
    poll_.setInterval(kPollMs);
    QObject::connect(&poll_, &QTimer::timeout, receiver, [this] {
      if (!done_.load(std::memory_order_acquire)) return;
      poll_.stop();
      wait();
      finished_();
    });
  }
  ~BackgroundJob() {
    poll_.stop();
    wait();
  }
  BackgroundJob(const BackgroundJob&) = delete;
  BackgroundJob& operator=(const BackgroundJob&) = delete;

  // Starts `work` (which owns copies of everything it reads). One job at a
  // time: a job still running is waited for first, and its result, if never
  // taken, is dropped here.
  void start(std::function<Result()> work) {
    wait();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      result_.reset();
    }
    done_.store(false, std::memory_order_relaxed);
    thread_ = std::thread([this, work = std::move(work)]() mutable {
      Result result = work();
      {
        // Constructed in place, never assigned over an old result: an
        // assignment replaces members in declaration order, so a result whose
        // members must die in reverse order (an executor before the event
        // sink it writes to) would free the sink first.
        std::lock_guard<std::mutex> lock(mutex_);
        result_.reset();
        result_.emplace(std::move(result));
      }
      done_.store(true, std::memory_order_release);
    });
    poll_.start();
  }

  bool isRunning() const { return poll_.isActive(); }

  // Blocks until the thread is done (`finished` still follows from the timer).
  void wait() {
    if (thread_.joinable()) thread_.join();
  }

  // The newest result, once: empty when it was taken already.
  std::optional<Result> take() {
    wait();
    std::lock_guard<std::mutex> lock(mutex_);
    std::optional<Result> result = std::move(result_);
    result_.reset();
    return result;
  }

 private:
  static constexpr int kPollMs = 10;  // GUI-thread checks while a job runs; far below a human's notice

  std::function<void()> finished_;
  QTimer poll_;
  std::thread thread_;
  std::mutex mutex_;
  std::optional<Result> result_;
  std::atomic<bool> done_{false};
};

}  // namespace pipelab
