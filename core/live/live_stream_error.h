// What goes wrong attaching to a run's live stream (pipelab --attach): an
// address that does not resolve or answer, a stream from another build or
// with values its experiment cannot have. The app shows the message in the
// user's language (ui/core_message_text.cpp; tests/ui/core_message_sites_test.cpp
// finds every throw of it).
#pragma once

#include <stdexcept>

namespace pipelab {

class LiveStreamError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace pipelab
