// Mailboxes and the ring all-reduce on plain threads.
#include "core/comm/channel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "core/comm/rendezvous.h"
#include "core/comm/ring_allreduce.h"
#include "tests/support/test_ring.h"

namespace pipelab {
namespace {

using Clock = std::chrono::steady_clock;

TEST(Mailbox, MessagesAreCopiesCountedOnTheReceiverUntilTaken) {
  RunControl control(2);
  DeviceAllocator sender_memory(0), receiver_memory(1);
  Mailbox inbox(1, receiver_memory, control);
  {
    Tensor activation = Tensor::from_values(2, 2, {1, 2, 3, 4}, &sender_memory);
    inbox.post_copy(MessageTag::activation(0, 0, 5, 1), activation);
    activation.fill(0);  // the message is a copy
  }
  EXPECT_EQ(receiver_memory.current()[static_cast<int>(MemoryCategory::CommBuffers)], 16);
  EXPECT_EQ(sender_memory.current_total(), 0);
  Tensor received = inbox.receive(MessageTag::activation(0, 0, 5, 1));
  EXPECT_EQ(received.to_vector(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(inbox.pending(), 0);
  received.reset();
  EXPECT_EQ(receiver_memory.current_total(), 0);
}

TEST(Mailbox, ReceiveWaitsForTheTagItAsksFor) {
  RunControl control(2);
  DeviceAllocator memory(1);
  Mailbox inbox(1, memory, control);
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    inbox.post_copy(MessageTag::gradient(0, 1, 0, 2), Tensor::from_values(1, 1, {2}));
    inbox.post_copy(MessageTag::gradient(0, 1, 0, 1), Tensor::from_values(1, 1, {1}));
  });
  EXPECT_EQ(inbox.receive(MessageTag::gradient(0, 1, 0, 1)).at(0, 0), 1.0f);
  EXPECT_EQ(inbox.receive(MessageTag::gradient(0, 1, 0, 2)).at(0, 0), 2.0f);
  sender.join();
}

TEST(Mailbox, StopWakesABlockedReceive) {
  RunControl control(1);
  DeviceAllocator memory(0);
  Mailbox inbox(0, memory, control);
  bool stopped = false;
  std::thread receiver([&] {
    try {
      inbox.receive(MessageTag::activation(1, 0, 0, 0));
    } catch (const RunStopped&) {
      stopped = true;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(control.all_idle() == false);  // idle, but no halt was asked for
  control.hold();
  // A paused run whose only worker waits; on a loaded machine the receiver
  // may reach its wait late, so give it time.
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(5);
  while (!control.all_idle() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(control.all_idle());
  const Clock::time_point before = Clock::now();
  control.stop();
  receiver.join();
  EXPECT_TRUE(stopped);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - before).count(), 0.5);
}

using testing::TestRing;

TEST(RingAllReduce, EveryMemberGetsTheSameSum) {
  for (int members : {2, 3, 4}) {
    TestRing ring(members);
    const int count = 10;  // not a multiple of every member count: uneven chunks
    std::vector<std::vector<float>> values(members, std::vector<float>(count));
    std::vector<float> expected(count, 0.0f);
    for (int d = 0; d < members; ++d)
      for (int i = 0; i < count; ++i) {
        values[d][i] = static_cast<float>((d + 1) * 100 + i);
        expected[i] += values[d][i];
      }
    std::vector<std::thread> threads;
    for (int d = 0; d < members; ++d)
      threads.emplace_back([&, d] {
        const RingGroup group = ring.group(d);
        ring_all_reduce(values[d], group, 0);
        ring_all_reduce(values[d], group, 1);  // twice: members x the sum
      });
    for (std::thread& thread : threads) thread.join();
    for (int d = 0; d < members; ++d) {
      EXPECT_EQ(values[d], values[0]) << "bit-identical on every member";
      for (int i = 0; i < count; ++i) EXPECT_FLOAT_EQ(values[d][i], members * expected[i]);
      EXPECT_EQ(ring.memory[d]->current_total(), 0);
    }
  }
}

// Sequence parallelism's halves: member r's slice r of a reduce-scatter is
// the sum of every member's slice r; an all-gather fills every slice from its
// member.
TEST(RingAllReduce, ReduceScatterAndAllGatherWorkOnEachMembersSlice) {
  for (int members : {2, 3, 4}) {
    TestRing ring(members);
    const int slice = 5;
    const int count = slice * members;
    std::vector<std::vector<float>> scattered(members, std::vector<float>(count));
    std::vector<std::vector<float>> gathered(members, std::vector<float>(count, -1.0f));
    std::vector<float> sum(count, 0.0f);
    for (int d = 0; d < members; ++d)
      for (int i = 0; i < count; ++i) {
        scattered[d][i] = static_cast<float>((d + 1) * 100 + i);
        sum[i] += scattered[d][i];
      }
    std::vector<std::thread> threads;
    for (int d = 0; d < members; ++d)
      threads.emplace_back([&, d] {
        const RingGroup group = ring.group(d);
        ring_reduce_scatter(scattered[d], group, 0);
        for (int i = 0; i < slice; ++i) gathered[d][d * slice + i] = static_cast<float>(d * 1000 + i);
        ring_all_gather(gathered[d], group, 1);
      });
    for (std::thread& thread : threads) thread.join();
    for (int d = 0; d < members; ++d) {
      for (int i = 0; i < slice; ++i) EXPECT_FLOAT_EQ(scattered[d][d * slice + i], sum[d * slice + i]);
      for (int m = 0; m < members; ++m)
        for (int i = 0; i < slice; ++i) EXPECT_EQ(gathered[d][m * slice + i], static_cast<float>(m * 1000 + i));
      EXPECT_EQ(ring.memory[d]->current_total(), 0);
    }
  }
}

// Ring attention's all-gather: each member works on every slice as it
// arrives, its own first and then r - 1, r - 2, ..., and each slice is
// already in place (and passed on) when the member sees it.
TEST(RingAllReduce, AllGatherHandsEachSliceOverAsItArrives) {
  for (int members : {1, 2, 3, 4}) {
    TestRing ring(members);
    const int slice = 3;
    std::vector<std::vector<float>> gathered(members, std::vector<float>(slice * members, -1.0f));
    std::vector<std::vector<int>> order(members);
    std::vector<int> wrong(members, 0);
    std::vector<std::thread> threads;
    for (int d = 0; d < members; ++d)
      threads.emplace_back([&, d] {
        for (int i = 0; i < slice; ++i) gathered[d][d * slice + i] = static_cast<float>(d * 10 + i);
        ring_all_gather_passing(gathered[d], ring.group(d), 0, [&, d](int member) {
          order[d].push_back(member);
          for (int i = 0; i < slice; ++i)
            wrong[d] += gathered[d][member * slice + i] != static_cast<float>(member * 10 + i);
        });
      });
    for (std::thread& thread : threads) thread.join();
    for (int d = 0; d < members; ++d) {
      std::vector<int> expected;
      for (int k = 0; k < members; ++k) expected.push_back((d - k + members) % members);
      EXPECT_EQ(order[d], expected) << members << " members, member " << d;
      EXPECT_EQ(wrong[d], 0) << "a slice was handed over before it arrived";
      EXPECT_EQ(ring.memory[d]->current_total(), 0);
    }
  }
}

TEST(Rendezvous, TheLastArrivalRunsTheActionAlone) {
  RunControl control(3);
  Rendezvous meeting(3, control);
  std::atomic<int> actions{0};
  std::atomic<int> after{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 3; ++w)
    threads.emplace_back([&, w] {
      meeting.arrive(w, [&] {
        EXPECT_EQ(after.load(), 0);  // nobody has gone on yet
        ++actions;
      });
      ++after;
    });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(actions.load(), 1);
  EXPECT_EQ(after.load(), 3);
}

}  // namespace
}  // namespace pipelab
