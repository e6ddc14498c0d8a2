// RefreshThrottle: how often a view that recomputes from the whole measured
// trace may do so while a run records. At least `interval_ms` apart, and
// after a refresh that took d ms at least 4 d: so however long the trace grows
// (up to RunController's record limit), such refreshes take at most a fifth
// of the GUI thread and the window keeps answering clicks.
#pragma once

#include <QElapsedTimer>
#include <algorithm>

namespace pipelab {

class RefreshThrottle {
 public:
  static constexpr int kCostFactor = 4;

  explicit RefreshThrottle(int interval_ms) : interval_ms_(interval_ms), wait_ms_(interval_ms) {}

  // Milliseconds until a refresh is due (0: now).
  qint64 remainingMs() const {
    return since_.isValid() ? std::max<qint64>(0, wait_ms_ - since_.elapsed()) : 0;
  }
  bool due() const { return remainingMs() == 0; }

  // Spans one refresh (a local at its top): its end sets when the next is due.
  class Timing {
   public:
    explicit Timing(RefreshThrottle& throttle) : throttle_(throttle) { took_.start(); }
    ~Timing() {
      throttle_.wait_ms_ =
          std::max<qint64>(throttle_.interval_ms_, kCostFactor * took_.elapsed());
      throttle_.since_.start();
    }
    Timing(const Timing&) = delete;
    Timing& operator=(const Timing&) = delete;

   private:
    RefreshThrottle& throttle_;
    QElapsedTimer took_;
  };

 private:
  qint64 interval_ms_;
  qint64 wait_ms_;
  QElapsedTimer since_;  // since the last refresh ended
};

}  // namespace pipelab
