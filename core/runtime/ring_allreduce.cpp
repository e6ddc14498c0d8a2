#include "core/runtime/ring_allreduce.h"

#include <cassert>
#include <cstring>

namespace pipelab {
namespace {

// Chunk k of n over `count` values: [begin(k), begin(k + 1)).
int64_t chunk_begin(int64_t count, int n, int k) { return count * k / n; }

}  // namespace

void ring_all_reduce(std::span<float> values, const RingGroup& group, int64_t collective) {
  const int n = group.size();
  assert(n >= 1 && group.rank >= 0 && group.rank < n);
  assert(static_cast<int>(group.mailboxes.size()) == n);
  if (n == 1) return;
  const int rank = group.rank;
  const int next = (rank + 1) % n;
  const int previous = (rank + n - 1) % n;
  const int64_t count = static_cast<int64_t>(values.size());
  Mailbox& mine = *group.mailboxes[rank];
  Mailbox& next_box = *group.mailboxes[next];

  auto send_chunk = [&](int chunk, int ring_step) {
    const int64_t begin = chunk_begin(count, n, chunk);
    const int64_t end = chunk_begin(count, n, chunk + 1);
    next_box.post_copy(
        MessageTag::ring_chunk(group.kind, group.devices[rank], collective, ring_step),
        values.data() + begin, end - begin);
  };
  auto receive_chunk = [&](int chunk, int ring_step, bool accumulate) {
    const int64_t begin = chunk_begin(count, n, chunk);
    const int64_t end = chunk_begin(count, n, chunk + 1);
    Tensor message = mine.receive(
        MessageTag::ring_chunk(group.kind, group.devices[previous], collective, ring_step));
    assert(message.size() == end - begin);
    float* target = values.data() + begin;
    if (accumulate) {
      for (int64_t i = 0; i < end - begin; ++i) target[i] += message.data()[i];
    } else if (end > begin) {
      std::memcpy(target, message.data(), static_cast<size_t>(end - begin) * sizeof(float));
    }
  };

  // Reduce-scatter: after step s, the chunk received holds s + 2 members' parts.
  for (int s = 0; s < n - 1; ++s) {
    send_chunk((rank - s + n) % n, s);
    receive_chunk((rank - s - 1 + 2 * n) % n, s, true);
  }
  // All-gather: pass the finished chunks on.
  for (int s = 0; s < n - 1; ++s) {
    send_chunk((rank + 1 - s + n) % n, n - 1 + s);
    receive_chunk((rank - s + n) % n, n - 1 + s, false);
  }
}

}  // namespace pipelab
