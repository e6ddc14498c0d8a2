#include "core/comm/all_to_all.h"

#include <cassert>
#include <cstring>

namespace pipelab {

void all_to_all(std::span<float> values, const RingGroup& group, int64_t collective) {
  const int n = group.size();
  if (n == 1) return;
  assert(values.size() % static_cast<size_t>(n) == 0);
  const int64_t chunk = static_cast<int64_t>(values.size()) / n;
  const int me = group.rank;
  // Posting never blocks, so every member sends all its chunks first.
  for (int to = 0; to < n; ++to)
    if (to != me)
      group.transport->post(group.devices[to],
                            MessageTag::ring_chunk(group.kind, group.devices[me], collective, 0),
                            values.data() + to * chunk, 1, chunk);
  for (int from = 0; from < n; ++from) {
    if (from == me) continue;
    Tensor message = group.mailbox->receive(
        MessageTag::ring_chunk(group.kind, group.devices[from], collective, 0));
    assert(message.size() == chunk);
    if (chunk > 0)
      std::memcpy(values.data() + from * chunk, message.data(),
                  static_cast<size_t>(chunk) * sizeof(float));
  }
}

}  // namespace pipelab
