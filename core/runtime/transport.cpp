#include "core/runtime/transport.h"

#include <cassert>

namespace pipelab {

void InProcessTransport::post(int to, const MessageTag& tag, const float* values, int64_t rows,
                              int64_t cols) {
  assert(hosts(to) && "a message for a device this process does not host");
  mailboxes_[static_cast<size_t>(to)]->post_copy(tag, values, rows, cols);
}

bool InProcessTransport::hosts(int device) const {
  return device >= 0 && device < static_cast<int>(mailboxes_.size()) &&
         mailboxes_[static_cast<size_t>(device)] != nullptr;
}

}  // namespace pipelab
