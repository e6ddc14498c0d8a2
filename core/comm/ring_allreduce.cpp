#include "core/comm/ring_allreduce.h"

#include <cassert>
#include <cstring>

namespace pipelab {
namespace {

// One member's place on the ring, and its two moves: send a chunk to the
// next member; receive one from the previous, adding or copying it.
class RingMember {
 public:
  RingMember(std::span<float> values, const RingGroup& group, int64_t collective)
      : values_(values), group_(group), collective_(collective) {
    assert(n() >= 1 && group.rank >= 0 && group.rank < n());
    assert(n() == 1 || (group.transport && group.mailbox));
  }

  int n() const { return group_.size(); }
  int rank() const { return group_.rank; }
  // Chunk k counted round the ring from this member (any integer k).
  int chunk(int k) const { return ((rank() + k) % n() + n()) % n(); }

  void send(int chunk, int ring_step) {
    const int next = (rank() + 1) % n();
    group_.transport->post(group_.devices[next],
                           MessageTag::ring_chunk(group_.kind, group_.devices[rank()], collective_, ring_step),
                           values_.data() + begin(chunk), 1, begin(chunk + 1) - begin(chunk));
  }

  void receive(int chunk, int ring_step, bool accumulate) {
    const int previous = (rank() + n() - 1) % n();
    const int64_t count = begin(chunk + 1) - begin(chunk);
    Tensor message = group_.mailbox->receive(
        MessageTag::ring_chunk(group_.kind, group_.devices[previous], collective_, ring_step));
    assert(message.size() == count);
    float* target = values_.data() + begin(chunk);
    if (accumulate) {
      for (int64_t i = 0; i < count; ++i) target[i] += message.data()[i];
    } else if (count > 0) {
      std::memcpy(target, message.data(), static_cast<size_t>(count) * sizeof(float));
    }
  }

  // n - 1 steps passing partial sums on (each adds what it receives), ending
  // with chunk `owned` whole here. Ring steps first_step, first_step + 1, ...
  void reduce_scatter(int owned, int first_step) {
    for (int s = 0; s < n() - 1; ++s) {
      send(chunk(owned - rank() - 1 - s), first_step + s);
      receive(chunk(owned - rank() - 2 - s), first_step + s, true);
    }
  }

  // n - 1 steps passing whole chunks on, starting from chunk `owned`. Each
  // received chunk is passed on before `arrived` works on it, so the next
  // member's wait overlaps that work (ring attention); `arrived` sees
  // `owned` first, then the chunks in the order they come.
  void all_gather(int owned, int first_step, const SliceArrival& arrived = {}) {
    if (n() > 1) send(owned, first_step);
    if (arrived) arrived(owned);
    for (int s = 0; s < n() - 1; ++s) {
      const int incoming = chunk(owned - rank() - s - 1);
      receive(incoming, first_step + s, false);
      if (s + 1 < n() - 1) send(incoming, first_step + s + 1);
      if (arrived) arrived(incoming);
    }
  }

 private:
  // Chunk k of n over the values: [begin(k), begin(k + 1)).
  int64_t begin(int k) const { return static_cast<int64_t>(values_.size()) * k / n(); }

  std::span<float> values_;
  const RingGroup& group_;
  const int64_t collective_;
};

}  // namespace

void ring_all_reduce(std::span<float> values, const RingGroup& group, int64_t collective) {
  RingMember member(values, group, collective);
  if (member.n() == 1) return;
  // Member r finishes chunk r + 1 (so its first send is its own chunk), then
  // passes the finished chunks on.
  const int owned = member.chunk(1);
  member.reduce_scatter(owned, 0);
  member.all_gather(owned, member.n() - 1);
}

void ring_reduce_scatter(std::span<float> values, const RingGroup& group, int64_t collective) {
  RingMember member(values, group, collective);
  assert(values.size() % static_cast<size_t>(member.n()) == 0);
  if (member.n() > 1) member.reduce_scatter(group.rank, 0);
}

void ring_all_gather(std::span<float> values, const RingGroup& group, int64_t collective) {
  ring_all_gather_passing(values, group, collective, {});
}

void ring_all_gather_passing(std::span<float> values, const RingGroup& group, int64_t collective,
                             const SliceArrival& arrived) {
  RingMember member(values, group, collective);
  assert(values.size() % static_cast<size_t>(member.n()) == 0);
  member.all_gather(group.rank, 0, arrived);
}

}  // namespace pipelab
