// Host-only checks of the EventPool's bookkeeping with fake event handles.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "gpu/device/event_pool.h"

namespace pipelab::gpu {
namespace {

cudaEvent_t fake(uintptr_t address) { return reinterpret_cast<cudaEvent_t>(address); }

struct FakeDriver {
  uintptr_t next = 0x1000;
  std::vector<cudaEvent_t> destroyed;
};

TEST(EventPoolTest, ReusesReleasedEventsInsteadOfMakingNewOnes) {
  FakeDriver driver;
  std::set<cudaEvent_t> seen;
  {
    EventPool pool([&] { return fake(driver.next += 0x10); },
                   [&](cudaEvent_t event) { driver.destroyed.push_back(event); });
    const cudaEvent_t a = pool.acquire();
    const cudaEvent_t b = pool.acquire();
    EXPECT_NE(a, b);
    EXPECT_EQ(pool.created(), 2);
    EXPECT_EQ(pool.in_use(), 2);
    pool.release(a);
    EXPECT_EQ(pool.idle(), 1);
    // The next wait gets the released event back; no new one is made.
    EXPECT_EQ(pool.acquire(), a);
    EXPECT_EQ(pool.created(), 2);
    // A thousand short-lived waits, one at a time, need no more events.
    for (int i = 0; i < 1000; ++i) {
      const cudaEvent_t event = pool.acquire();
      seen.insert(event);
      pool.release(event);
    }
    EXPECT_EQ(pool.created(), 3);
    EXPECT_EQ(seen.size(), 1u);
    pool.release(a);
    pool.release(b);
    EXPECT_EQ(pool.in_use(), 0);
    EXPECT_TRUE(driver.destroyed.empty());
  }
  // The pool destroys every event it made when it goes.
  EXPECT_EQ(driver.destroyed.size(), 3u);
}

}  // namespace
}  // namespace pipelab::gpu
