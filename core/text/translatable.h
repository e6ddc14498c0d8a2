// PIPELAB_TRANSLATABLE marks an English text of core/ that the app shows
// translated (a schedule's or planner's description): core stays English and
// Qt-free, ui/translations/update_translations.sh collects the marked texts
// for translation, and the app looks them up with
// QCoreApplication::translate(context, text).
#pragma once

#define PIPELAB_TRANSLATABLE(context, text) text
