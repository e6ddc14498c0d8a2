// The app's languages: English (the source text) and Simplified Chinese (Qt
// Linguist: ui/translations/pipelab_zh_CN.ts, compiled into the app as
// :/i18n/pipelab_zh_CN.qm). The language follows the system locale until the
// user picks one under View > Language; the choice is kept in QSettings.
#pragma once

#include <QList>
#include <QString>

namespace pipelab {

struct Language {
  QString code;  // "en", "zh_CN": the QSettings value and the .qm file's suffix
  QString name;  // in its own language, as the menu shows it
};

// Every language the app speaks, English first.
QList<Language> languages();

// The language to start in: the one the user chose last, else the system
// locale's when the app speaks it, else English.
QString startup_language();

// Installs `code`'s translations (ours and Qt's own, for the standard dialogs'
// buttons) in the running application; every window gets a LanguageChange
// event. False, with English kept, for a code the app does not speak.
bool apply_language(const QString& code);

// The language applied last ("en" before any).
QString current_language();

// Remembers `code` as the user's choice for the next start.
void remember_language(const QString& code);

}  // namespace pipelab
