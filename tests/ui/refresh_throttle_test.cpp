// RefreshThrottle: a view's whole-trace refreshes wait at least their interval,
// and four times as long as the last one took, so a long trace cannot keep
// the GUI thread busy.
#include <QtTest>
#include <thread>

#include "ui/models/refresh_throttle.h"

using namespace pipelab;

class RefreshThrottleTest : public QObject {
  Q_OBJECT

 private slots:
  void aSlowRefreshWaitsFourTimesItsLength() {
    RefreshThrottle throttle(10);
    QVERIFY(throttle.due());  // nothing refreshed yet
    {
      const RefreshThrottle::Timing timing(throttle);
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
    }
    QVERIFY(!throttle.due());
    QVERIFY2(throttle.remainingMs() > 100, qPrintable(QString::number(throttle.remainingMs())));
    QTRY_VERIFY_WITH_TIMEOUT(throttle.due(), 2000);
  }

  void aQuickRefreshWaitsTheInterval() {
    RefreshThrottle throttle(200);
    { const RefreshThrottle::Timing timing(throttle); }
    QVERIFY(!throttle.due());
    QVERIFY(throttle.remainingMs() > 100);
    QVERIFY(throttle.remainingMs() <= 200);
  }
};

QTEST_MAIN(RefreshThrottleTest)
#include "refresh_throttle_test.moc"
