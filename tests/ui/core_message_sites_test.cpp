// Every place in core/ that makes a message the app shows (docs/contributing.md
// says which calls) comes out in Chinese: the message, its values filled in,
// goes through core_message_text as the app's does. Unlike the translations
// test, which meets messages by running files and fields, this one reads the
// sources, so a new check cannot be forgotten.
#include "core_message_sites.h"

#include <QFile>
#include <QtTest>

#include "ui/core_message_text.h"
#include "ui/language.h"
#include "ui_test_support.h"

using namespace pipelab;
using namespace pipelab::testing;

namespace {

// What stands for every value in the message tried: a number passes for any
// value, and holds no ": " that the app reads as the end of a place.
const std::string kValue = "7";

// A piece of text is the site's own words when it holds at least 4 letters;
// shorter ones (": ", " x ", "s") only join values.
bool is_words(const MessagePiece& piece) {
  if (!piece.is_text) return false;
  return std::count_if(piece.text.begin(), piece.text.end(),
                       [](unsigned char c) { return std::isalpha(c); }) >= 4;
}

bool has_words(const MessageVariant& variant) {
  return std::any_of(variant.begin(), variant.end(), is_words);
}

// The variant with each value as `value`, or as %1, %2, ... when numbered.
QString variant_text(const MessageVariant& variant, const std::string& value, bool numbered) {
  std::string text;
  int values = 0;
  for (const MessagePiece& piece : variant) {
    if (piece.is_text) {
      text += piece.text;
    } else if (numbered) {
      text += '%';
      text += std::to_string(++values);
    } else {
      text += value;
    }
  }
  return QString::fromStdString(text);
}

// Messages known to have no Chinese yet, "file: English with %1, %2, ..." a
// line (see the file's head for why each group is there).
constexpr const char* kListFile = "core_messages_without_chinese.txt";

QStringList listed_without_chinese() {
  QFile file(QStringLiteral(PIPELAB_SOURCE_DIR "/tests/ui/") + QString::fromLatin1(kListFile));
  if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) return {};
  QStringList entries;
  for (const QString& line : QString::fromUtf8(file.readAll()).split(QLatin1Char('\n')))
    if (!line.trimmed().isEmpty() && !line.startsWith(QLatin1Char('#'))) entries << line;
  return entries;
}

bool has_chinese(const QString& text) {
  return std::any_of(text.begin(), text.end(),
                     [](QChar c) { return c.unicode() >= 0x4e00 && c.unicode() <= 0x9fff; });
}

}  // namespace

class CoreMessageSitesTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { use_test_settings(); }
  void cleanup() { apply_language(QStringLiteral("en")); }

  // The reader on a small source: literals over lines, an escaped quote, a
  // std::string("..."), a ?:, a call named in a comment and a list of another name.
  void readsPiecesAndVariantsOfASite() {
    const std::string source =
        "// throw DataError(\"not a site\")\n"
        "void f() {\n"
        "  my_problems.push_back(\"not a site either\");\n"
        "  throw DataError(path + \": holds \\\"\" + std::to_string(n) +\n"
        "                  \"\\\" rows; \"\n"
        "                  \"so \" + std::string(\"use \") + (n > 1 ? \"fewer\" : "
        "std::to_string(k)) + \" rows\");\n"
        "}\n";
    const std::vector<MessageSite> sites = message_sites_in("core/data/f.cpp", source);
    QCOMPARE(sites.size(), size_t(1));
    QCOMPARE(sites[0].line, 4);
    QCOMPARE(sites[0].call, std::string("throw DataError("));
    QCOMPARE(sites[0].variants.size(), size_t(2));
    QCOMPARE(variant_text(sites[0].variants[0], kValue, true),
             QStringLiteral("%1: holds \"%2\" rows; so use fewer rows"));
    QCOMPARE(variant_text(sites[0].variants[1], kValue, true),
             QStringLiteral("%1: holds \"%2\" rows; so use %3 rows"));
  }

  void everyMessageSiteInCoreHasChinese() {
    const std::vector<MessageSite> sites = core_message_sites(PIPELAB_SOURCE_DIR);
    // Each kind of call still makes messages somewhere (a renamed type would
    // otherwise leave its sites unchecked).
    for (const std::string& call : kMessageSiteCalls)
      QVERIFY2(std::any_of(sites.begin(), sites.end(),
                           [&](const MessageSite& site) { return site.call == call; }),
               qPrintable(QStringLiteral("no \"%1\" in core/; update kMessageSiteCalls")
                              .arg(QString::fromStdString(call))));
    QVERIFY(apply_language(QStringLiteral("zh_CN")));
    const QStringList listed = listed_without_chinese();
    QStringList missing;
    QStringList met;  // the listed ones still without Chinese
    int checked = 0;
    for (const MessageSite& site : sites) {
      for (const MessageVariant& variant : site.variants) {
        // A message made elsewhere (error.what(), a helper's) is checked where it is made.
        if (!has_words(variant)) continue;
        ++checked;
        if (has_chinese(core_message_text(variant_text(variant, kValue, false)))) continue;
        const QString entry = QString::fromStdString(site.file) + QStringLiteral(": ") +
                              variant_text(variant, kValue, true);
        if (listed.contains(entry)) {
          met << entry;
          continue;
        }
        missing << QStringLiteral("%1:%2: %3")
                       .arg(QString::fromStdString(site.file))
                       .arg(site.line)
                       .arg(variant_text(variant, kValue, true));
      }
    }
    qInfo(
        "%zu message sites in core/, %d messages with text of their own, %lld listed without "
        "Chinese",
        sites.size(), checked, static_cast<long long>(listed.size()));
    // One warning a site: QVERIFY2 cuts a long message short.
    for (const QString& site : missing) qWarning("%s", qPrintable(site));
    // Built by concatenation: QString::arg would fill the %1 the advice shows.
    const QString advice = QString::number(missing.size()) +
                           QStringLiteral(
                               " messages from core/ have no Chinese. For each, add its English "
                               "with %1, %2, ... for the values as a pattern in "
                               "ui/core_message_text.cpp (more specific patterns before general "
                               "ones), then its Chinese in ui/translations/pipelab_zh_CN.ts "
                               "(docs/contributing.md); the sites are listed above");
    QVERIFY2(missing.isEmpty(), qPrintable(advice));
    // The list only shrinks: an entry whose message now has Chinese, or is gone, leaves it.
    for (const QString& entry : listed)
      QVERIFY2(met.contains(entry),
               qPrintable(entry +
                          QStringLiteral(" has Chinese now or is no longer in core/; "
                                         "remove it from tests/ui/") +
                          QString::fromLatin1(kListFile)));
  }
};

QTEST_MAIN(CoreMessageSitesTest)
#include "core_message_sites_test.moc"
