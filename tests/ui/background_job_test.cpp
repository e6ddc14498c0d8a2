// BackgroundJob hands a worker thread's result to the GUI thread. A result
// nobody took (a run stopped while it was preparing, then started again) is
// dropped by the next start, and dropped as a whole object is destroyed: its
// members in reverse order, so an executor dies before the sink it writes to.
#include <QObject>
#include <QtTest>
#include <atomic>
#include <memory>
#include <thread>

#include "ui/models/background_job.h"

using namespace pipelab;

namespace {

std::atomic<int> sinks_alive{0};
std::atomic<int> writes_after_sink_died{0};

struct Sink {
  Sink() { ++sinks_alive; }
  ~Sink() {
    *alive = false;
    --sinks_alive;
  }
  Sink(const Sink&) = delete;
  std::shared_ptr<std::atomic<bool>> alive = std::make_shared<std::atomic<bool>>(true);
};

// Writes to its sink when it dies, as an executor records its last memory sample.
struct Writer {
  explicit Writer(const Sink& sink) : sink_alive(sink.alive) {}
  ~Writer() {
    if (!*sink_alive) ++writes_after_sink_died;
  }
  std::shared_ptr<std::atomic<bool>> sink_alive;
};

// As RunController::Prepared: the sink first, so the writer dies before it.
struct Result {
  Result() = default;
  Result(Result&&) = default;
  Result& operator=(Result&&) = delete;
  std::shared_ptr<Sink> sink;
  std::shared_ptr<Writer> writer;
};

Result make_result() {
  Result result;
  result.sink = std::make_shared<Sink>();
  result.writer = std::make_shared<Writer>(*result.sink);
  return result;
}

}  // namespace

class BackgroundJobTest : public QObject {
  Q_OBJECT

 private slots:
  void aResultNobodyTookDiesWholeBeforeTheNextStart() {
    QObject receiver;
    int finished = 0;
    BackgroundJob<Result> job(&receiver, [&] { ++finished; });
    job.start(make_result);
    job.wait();  // done, and never taken
    QCOMPARE(sinks_alive.load(), 1);
    // The second job waits for the gate, so that what is alive between the
    // start and the gate is what the start left (its worker may run at once).
    std::atomic<bool> gate{false};
    job.start([&] {
      while (!gate.load()) std::this_thread::yield();
      return make_result();
    });  // drops the first result
    QCOMPARE(sinks_alive.load(), 0);
    QCOMPARE(writes_after_sink_died.load(), 0);
    gate = true;
    job.wait();
    QCOMPARE(sinks_alive.load(), 1);  // the second, kept until taken
    QTRY_COMPARE(finished, 1);        // the poll saw both ends as one
    std::optional<Result> taken = job.take();
    QVERIFY(taken.has_value());
    QVERIFY(!job.take().has_value());  // once
    taken.reset();
    QCOMPARE(sinks_alive.load(), 0);
    QCOMPARE(writes_after_sink_died.load(), 0);
  }
};

QTEST_MAIN(BackgroundJobTest)
#include "background_job_test.moc"
