// core/ writes its messages in English (it has no Qt): the run log and the
// experiment's problems. The app shows the most common ones in its language by
// matching them against the English patterns listed in core_message_text.cpp,
// whose translations live in the .ts like every other text; any other message
// stays English, inside the app's own translated sentence.
#pragma once

#include <QString>

namespace pipelab {

// `english` in the app's language when it matches a known pattern, else as it is.
QString core_message_text(const QString& english);

}  // namespace pipelab
