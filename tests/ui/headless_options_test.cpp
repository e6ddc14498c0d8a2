// The GUI binary's scripting flags: parsing, and the real binary making a
// chart offscreen.
#include "ui/headless_options.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "ui_test_support.h"

using namespace pipelab;

namespace {

// The GUI binary runs without a display, its settings in `folder`.
void offscreen_in(QProcess* process, const QTemporaryDir& folder) {
  QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
  environment.insert("QT_QPA_PLATFORM", "offscreen");
  environment.insert("XDG_CONFIG_HOME", folder.filePath("config"));
  process->setProcessEnvironment(environment);
}

}  // namespace

class HeadlessOptionsTest : public QObject {
  Q_OBJECT

 private slots:
  void parsesEveryFlag() {
    const auto parsed =
        parse_headless_options({"exp.json", "--run", "--steps", "12", "--export-timeline", "t.svg",
                                "--export-memory=m.pdf", "--quit"});
    QVERIFY2(parsed.options, qPrintable(parsed.error));
    const HeadlessOptions& options = *parsed.options;
    QCOMPARE(options.experiment_path, QString("exp.json"));
    QVERIFY(options.run);
    QCOMPARE(options.steps, 12);
    QCOMPARE(options.export_timeline, QString("t.svg"));
    QCOMPARE(options.export_memory, QString("m.pdf"));
    QVERIFY(options.quit);
    QVERIFY(options.scripted());
  }

  void parsesAPresetAndAnAnimatedExport() {
    const auto parsed = parse_headless_options({"--preset", "gpipe", "--export-gif=a.gif"});
    QVERIFY2(parsed.options, qPrintable(parsed.error));
    QCOMPARE(parsed.options->preset, QString("gpipe"));
    QCOMPARE(parsed.options->export_gif, QString("a.gif"));
    QVERIFY(parsed.options->scripted());
  }

  void parsesAnAttach() {
    const auto parsed = parse_headless_options({"--attach", "node1:7300", "-platform", "xcb"});
    QVERIFY2(parsed.options, qPrintable(parsed.error));
    QCOMPARE(parsed.options->attach, QString("node1:7300"));
    QVERIFY(!parsed.options->scripted());
  }

  void noFlagsIsAnInteractiveSession() {
    const auto parsed = parse_headless_options({});
    QVERIFY(parsed.options);
    QVERIFY(!parsed.options->scripted());
    QVERIFY(parsed.options->experiment_path.isEmpty());
  }

  void qtOptionsAreLeftToQt() {
    const auto parsed = parse_headless_options({"-platform", "offscreen", "a.json", "-reverse"});
    QVERIFY(parsed.options);
    QCOMPARE(parsed.options->experiment_path, QString("a.json"));
  }

  void badArgumentsGiveOneLine_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("unknown") << QStringList{"--fly"} << "--fly";
    QTest::newRow("steps missing") << QStringList{"--steps"} << "--steps";
    QTest::newRow("steps zero") << QStringList{"--steps", "0"} << "at least 1";
    QTest::newRow("steps text") << QStringList{"--steps", "many"} << "many";
    QTest::newRow("bad extension") << QStringList{"--export-timeline", "t.jpg"} << ".png";
    QTest::newRow("no file name") << QStringList{"--export-memory", "--quit"} << "--export-memory";
    QTest::newRow("two files") << QStringList{"a.json", "b.json"} << "b.json";
    QTest::newRow("gif extension") << QStringList{"--export-gif", "t.png"} << ".gif";
    QTest::newRow("preset missing") << QStringList{"--preset"} << "--preset";
    QTest::newRow("file and preset") << QStringList{"a.json", "--preset", "gpipe"} << "not both";
    QTest::newRow("attach without port") << QStringList{"--attach", "node1"} << "HOST:PORT";
    QTest::newRow("attach and a file")
        << QStringList{"a.json", "--attach", "node1:7300"} << "goes alone";
    QTest::newRow("attach and run") << QStringList{"--attach=node1:7300", "--run"} << "goes alone";
  }

  void badArgumentsGiveOneLine() {
    QFETCH(QStringList, args);
    QFETCH(QString, mentions);
    const auto parsed = parse_headless_options(args);
    QVERIFY(!parsed.options);
    QVERIFY2(parsed.error.contains(mentions), qPrintable(parsed.error));
    QVERIFY(!parsed.error.contains('\n'));
    QVERIFY(parsed.error.contains("usage:"));
  }

#ifdef PIPELAB_GUI_PATH
  void binaryExitsWithTwoOnBadArguments() {
    QProcess process;
    process.start(PIPELAB_GUI_PATH, {"--no-such-flag"});
    QVERIFY(process.waitForFinished(20000));
    QCOMPARE(process.exitCode(), 2);
    const QByteArray err = process.readAllStandardError().trimmed();
    QVERIFY(err.contains("--no-such-flag"));
    QCOMPARE(err.count('\n'), 0);
  }

  void binaryExportsThePredictedTimelineOffscreen() {
    QTemporaryDir folder;
    const QString out = folder.filePath("timeline.png");
    QProcess process;
    offscreen_in(&process, folder);
    process.start(PIPELAB_GUI_PATH, {"--export-timeline", out, "--quit"});
    QVERIFY(process.waitForFinished(30000));
    QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
    const QByteArray bytes = testing::read_bytes(out);
    QVERIFY(bytes.startsWith(QByteArray("\x89PNG\r\n\x1a\n", 8)));
    QVERIFY(bytes.size() > 2000);
  }

  void binaryAnimatesAPresetAndRefusesAnUnknownOne() {
    QTemporaryDir folder;
    const QString out = folder.filePath("pipedream.gif");
    QProcess process;
    offscreen_in(&process, folder);
    process.start(PIPELAB_GUI_PATH, {"--preset", "pipedream", "--export-gif", out, "--quit"});
    QVERIFY(process.waitForFinished(30000));
    QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
    QVERIFY(testing::read_bytes(out).startsWith("GIF89a"));

    process.start(PIPELAB_GUI_PATH, {"--preset", "no-such-figure", "--quit"});
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitCode(), 2);
    const QByteArray err = process.readAllStandardError();
    QVERIFY(err.contains("no-such-figure") && err.contains("gpipe-overhead-4"));
  }

  void binaryTrainsThenExportsTheMemoryChart() {
    QTemporaryDir folder;
    const QString out = folder.filePath("memory.svg");
    QProcess process;
    offscreen_in(&process, folder);
    process.start(PIPELAB_GUI_PATH, {"--run", "--steps", "3", "--export-memory", out, "--quit"});
    QVERIFY(process.waitForFinished(30000));
    QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
    const QByteArray bytes = testing::read_bytes(out);
    QVERIFY(bytes.contains("<svg"));
    QVERIFY(bytes.size() > 2000);
  }

  void binaryRefusesAMalformedFileWhenScripted() {
    QTemporaryDir folder;
    const QString broken = folder.filePath("broken.json");
    QVERIFY(testing::write_text(broken, "not json"));
    QProcess process;
    offscreen_in(&process, folder);
    process.start(PIPELAB_GUI_PATH,
                  {broken, "--export-timeline", folder.filePath("t.png"), "--quit"});
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitCode(), 2);
    QVERIFY(process.readAllStandardError().contains("broken.json"));
  }
#endif
};

QTEST_MAIN(HeadlessOptionsTest)
#include "headless_options_test.moc"
