// Chart exports write real PNG, SVG and PDF files; the trace exports write
// Chrome JSON and CSV.
#include <QFileInfo>
#include <QJsonDocument>
#include <QMenu>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include "ui/exports/chart_export.h"
#include "ui/exports/export_actions.h"
#include "ui/exports/trace_export.h"
#include "ui/main_window.h"
#include "ui/models/prediction_updater.h"
#include "ui/panels/memory_view.h"
#include "ui/panels/training_view.h"
#include "ui/timeline/timeline_view.h"
#include "ui_test_support.h"

using namespace pipelab;

namespace {

constexpr qint64 kNonTrivialBytes = 2000;

bool is_png(const QByteArray& bytes) {
  return bytes.startsWith(QByteArray("\x89PNG\r\n\x1a\n", 8));
}

// The document element of an SVG file.
QString xml_root(const QByteArray& bytes) {
  QXmlStreamReader reader(bytes);
  while (!reader.atEnd()) {
    if (reader.readNext() == QXmlStreamReader::StartElement) return reader.name().toString();
  }
  return {};
}

}  // namespace

class ExportsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::use_test_settings(); }

  void formatFollowsTheExtension() {
    QCOMPARE(chart_format_for_path("a/b.PNG"), std::optional<ChartFormat>(ChartFormat::Png));
    QCOMPARE(chart_format_for_path("x.svg"), std::optional<ChartFormat>(ChartFormat::Svg));
    QCOMPARE(chart_format_for_path("x.pdf"), std::optional<ChartFormat>(ChartFormat::Pdf));
    QVERIFY(!chart_format_for_path("x.jpg"));
    QVERIFY(!chart_format_for_path("png"));
  }

  void timelineMemoryAndTrainingChartsExportInEveryFormat_data() {
    QTest::addColumn<QString>("chart");
    QTest::addColumn<QString>("extension");
    for (const char* chart : {"timeline", "memory", "training", "overhead"})
      for (const char* extension : {"png", "svg", "pdf"})
        QTest::newRow(qPrintable(QString("%1.%2").arg(chart, extension))) << chart << extension;
  }

  void timelineMemoryAndTrainingChartsExportInEveryFormat() {
    QFETCH(QString, chart);
    QFETCH(QString, extension);
    QTemporaryDir folder;
    QVERIFY(folder.isValid());
    MainWindow window;
    window.predictor()->updateNow();
    window.memoryView()->rebuild();
    const QString path = folder.filePath(chart + "." + extension);
    QString error;
    bool ok = false;
    if (chart == "timeline") ok = window.exports()->exportTimeline(path, &error, QSize(1200, 400));
    if (chart == "memory") ok = window.exports()->exportMemoryChart(path, &error, QSize(1000, 600));
    if (chart == "training")
      ok = window.exports()->exportTrainingChart(path, &error, QSize(900, 400));
    if (chart == "overhead")
      ok = window.exports()->exportOverheadChart(path, &error, QSize(900, 400));
    QVERIFY2(ok, qPrintable(error));
    const QByteArray bytes = testing::read_bytes(path);
    QVERIFY2(bytes.size() > kNonTrivialBytes, qPrintable(QString::number(bytes.size())));
    if (extension == "png") {
      QVERIFY(is_png(bytes));
      QImage image;
      QVERIFY(image.loadFromData(bytes, "PNG"));
      QVERIFY(image.width() >= 900);
      // Not a blank page: some pixels are not white.
      bool coloured = false;
      for (int y = 0; y < image.height() && !coloured; y += 7)
        for (int x = 0; x < image.width() && !coloured; x += 7)
          coloured = QColor(image.pixel(x, y)) != QColor(Qt::white);
      QVERIFY(coloured);
    } else if (extension == "svg") {
      QCOMPARE(xml_root(bytes), QString("svg"));
    } else {
      QVERIFY(bytes.startsWith("%PDF-"));
      QVERIFY(bytes.contains("%%EOF"));
    }
  }

  void bothTimelinesGoIntoOneFile() {
    QTemporaryDir folder;
    MainWindow window;
    window.timelineView()->setArrangement(TimelineView::Arrangement::PredictedOnly);
    QString error;
    const QString one = folder.filePath("one.png");
    QVERIFY(window.exports()->exportTimeline(one, &error, QSize(800, 300)));
    window.timelineView()->setArrangement(TimelineView::Arrangement::PredictedUnder);
    const QString two = folder.filePath("two.png");
    QVERIFY(window.exports()->exportTimeline(two, &error, QSize(800, 300)));
    QImage single(one);
    QImage stacked(two);
    QCOMPARE(stacked.width(), single.width());
    QCOMPARE(stacked.height(), 2 * single.height());
  }

  void badTargetsFailWithAReason() {
    QTemporaryDir folder;
    MainWindow window;
    QString error;
    QVERIFY(!window.exports()->exportTimeline(folder.filePath("chart.bmp"), &error));
    QVERIFY(error.contains(".png"));
    error.clear();
    QVERIFY(!window.exports()->exportTimeline(folder.filePath("missing-folder/chart.png"), &error));
    QVERIFY(!error.isEmpty());
  }

  void traceExportsWriteChromeJsonAndCsv() {
    QTemporaryDir folder;
    MainWindow window;
    window.predictor()->updateNow();
    QString error;
    const QString json_path = folder.filePath("trace.json");
    QVERIFY2(window.exports()->exportChromeTrace(json_path, &error), qPrintable(error));
    QJsonParseError parse_error;
    const QJsonDocument json =
        QJsonDocument::fromJson(testing::read_bytes(json_path), &parse_error);
    QCOMPARE(parse_error.error, QJsonParseError::NoError);
    QVERIFY(json.isObject());
    QVERIFY(json.object().value("traceEvents").toArray().size() > 0);

    const QString prefix = folder.filePath("run");
    QVERIFY2(window.exports()->exportCsv(prefix, &error), qPrintable(error));
    const QByteArray events = testing::read_bytes(prefix + "_events.csv");
    QVERIFY(events.startsWith("device,kind,"));
    // One line per predicted op plus the header.
    const int ops = int(window.predictor()->prediction()->result.trace.events.size());
    QCOMPARE(events.count('\n'), ops + 1);
    QVERIFY(QFileInfo::exists(prefix + "_memory.csv"));
    QVERIFY(QFileInfo::exists(prefix + "_steps.csv"));
  }

  void csvPrefixDropsTheExtension() {
    QCOMPARE(csv_prefix_for_path("a/run.csv"), QString("a/run"));
    QCOMPARE(csv_prefix_for_path("a/run.CSV"), QString("a/run"));
    QCOMPARE(csv_prefix_for_path("a/run"), QString("a/run"));
  }

  void exportMenuOffersChartsThenTraces() {
    MainWindow window;
    const auto* export_menu = window.findChild<QMenu*>(QStringLiteral("exportMenu"));
    QVERIFY(export_menu);
    QStringList texts;
    for (const QAction* action : export_menu->actions())
      texts << (action->isSeparator() ? QStringLiteral("|") : action->text());
    QCOMPARE(texts,
             (QStringList{"&Timeline chart…", "&Memory chart…", "T&raining chart…",
                          "&Comparison of runs…", "&Overhead chart…", "&Animated timeline (GIF)…",
                          "|", "Trace as &Chrome JSON (Perfetto)…", "&Events as CSV…"}));
  }
};

QTEST_MAIN(ExportsTest)
#include "exports_test.moc"
