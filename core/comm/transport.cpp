#include "core/comm/transport.h"

#include <cassert>
#include <stdexcept>

namespace pipelab {

void InProcessTransport::post(int to, const MessageTag& tag, const float* values, int64_t rows,
                              int64_t cols) {
  assert(hosts(to) && "a message for a device this process does not host");
  if (is_parameter_server_request(tag.kind)) {
    if (!server_inbox_)
      throw std::runtime_error("a parameter-server request for a process without servers");
    server_inbox_(to, tag, values, rows * cols);
    return;
  }
  mailboxes_[static_cast<size_t>(to)]->post_copy(tag, values, rows, cols);
}

bool InProcessTransport::hosts(int device) const {
  return device >= 0 && device < static_cast<int>(mailboxes_.size()) &&
         mailboxes_[static_cast<size_t>(device)] != nullptr;
}

}  // namespace pipelab
