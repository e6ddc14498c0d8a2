#include "ui/language.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QSettings>
#include <QTranslator>

namespace pipelab {
namespace {

const char* const kLanguageKey = "language";
const char* const kEnglish = "en";

QString& applied_code() {
  static QString code = QString::fromLatin1(kEnglish);
  return code;
}

// The installed translators live as long as the application.
QTranslator& app_translator() {
  static QTranslator translator;
  return translator;
}

QTranslator& qt_translator() {
  static QTranslator translator;
  return translator;
}

bool speaks(const QString& code) {
  for (const Language& language : languages())
    if (language.code == code) return true;
  return false;
}

}  // namespace

QList<Language> languages() {
  return {{QString::fromLatin1(kEnglish), QStringLiteral("English")},
          {QStringLiteral("zh_CN"), QStringLiteral("简体中文")}};
}

QString startup_language() {
  const QString chosen = QSettings().value(kLanguageKey).toString();
  if (speaks(chosen)) return chosen;
  // Any Chinese locale gets Simplified Chinese: closer than English for a
  // Traditional reader of this field's terms.
  if (QLocale::system().language() == QLocale::Chinese) return QStringLiteral("zh_CN");
  return QString::fromLatin1(kEnglish);
}

bool apply_language(const QString& code) {
  if (!speaks(code)) return false;
  QCoreApplication::removeTranslator(&app_translator());
  QCoreApplication::removeTranslator(&qt_translator());
  applied_code() = QString::fromLatin1(kEnglish);
  if (code != QLatin1String(kEnglish)) {
    if (!app_translator().load(QStringLiteral(":/i18n/pipelab_") + code + QStringLiteral(".qm")))
      return false;
    QCoreApplication::installTranslator(&app_translator());
    // Qt's own texts (Save, Cancel, file dialogs) when the system has them.
    if (qt_translator().load(QStringLiteral("qtbase_") + code,
                             QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
      QCoreApplication::installTranslator(&qt_translator());
  }
  applied_code() = code;
  return true;
}

QString current_language() { return applied_code(); }

void remember_language(const QString& code) { QSettings().setValue(kLanguageKey, code); }

}  // namespace pipelab
