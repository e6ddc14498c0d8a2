// The app opening every file under a folder of malformed experiments and data
// files, as a user picking the wrong file would. A file that is not an
// experiment is refused: the window stays up, a notice names the file, and the
// experiment on screen (its settings, file and unsaved state) is unchanged. An
// experiment whose values or data are wrong opens, as the app opens every
// experiment it can read, and says what to fix: a run is refused or fails with
// the reason, never crashes.
#include <QDir>
#include <QDirIterator>
#include <QTemporaryDir>
#include <QtTest>
#include <cstdint>
#include <map>

#include "core/io/experiment_io.h"
#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/prediction_updater.h"
#include "ui/models/run_controller.h"
#include "ui_test_support.h"

using namespace pipelab;

namespace {

constexpr int kRunTimeoutMs = 20000;

enum class Expect {
  Refused,           // not an experiment: the previous one stays
  OpensWithProblem,  // an experiment with values to fix: listed, a run is refused
  RunFails,          // an experiment whose data is missing or malformed: the run fails
};

// A model the app accepts, to wrap one fault in.
const QByteArray kModel = R"("model": {"input": [2], "layers": [{"type": "linear", "out": 3}]})";

QByteArray repeated(const QByteArray& text, int times) {
  QByteArray result;
  result.reserve(text.size() * times);
  for (int i = 0; i < times; ++i) result += text;
  return result;
}

// Bytes from a fixed linear congruential sequence: the same garbage every run.
QByteArray garbage(int size) {
  QByteArray bytes(size, '\0');
  uint32_t state = 12345;
  for (char& byte : bytes) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<char>(state >> 24);
  }
  return bytes;
}

// An IDX header (magic, dimensions) with `payload` bytes after it.
QByteArray idx_file(uint8_t dimensions, const std::vector<uint32_t>& sizes, int payload) {
  QByteArray bytes;
  bytes += char(0);
  bytes += char(0);
  bytes += char(0x08);  // unsigned bytes
  bytes += char(dimensions);
  for (uint32_t size : sizes)
    for (int shift = 24; shift >= 0; shift -= 8) bytes += char((size >> shift) & 0xff);
  bytes += QByteArray(payload, '\1');
  return bytes;
}

// Writes the folder's files; returns what each should do, by path relative to it.
std::map<QString, Expect> write_malformed_folder(const QDir& folder) {
  std::map<QString, Expect> files;
  auto add = [&](const QString& name, const QByteArray& bytes, Expect expect) {
    QVERIFY(folder.mkpath(QFileInfo(folder.filePath(name)).path()));
    QVERIFY(testing::write_text(folder.filePath(name), bytes));
    files[name] = expect;
  };
  // Not experiments at all.
  add("empty.json", "", Expect::Refused);
  add("whitespace.json", " \n\t\n", Expect::Refused);
  add("truncated.json", R"({"name": "cut short", "model": {"input": [2], "layers": [{"type": "lin)",
      Expect::Refused);
  add("truncated_after_key.json", R"({"name": "cut", "parallel": {"pp": )", Expect::Refused);
  add("binary.json", garbage(4096), Expect::Refused);
  add("nul_bytes.json", QByteArray("{\"name\": \"a\0b\", ", 15) + kModel + "}", Expect::Refused);
  add("invalid_utf8_value.json", "{\"name\": \"\xff\xfe\xc3(\", " + kModel + "}", Expect::Refused);
  add("invalid_utf8_key.json", "{\"\xc0\xaf\": 1, " + kModel + "}", Expect::Refused);
  add("utf16.json", QByteArray("\xff\xfe{\0}\0", 6), Expect::Refused);
  add("array_root.json", "[1, 2, 3]", Expect::Refused);
  add("null_root.json", "null", Expect::Refused);
  add("number_root.json", "42", Expect::Refused);
  add("two_documents.json", "{" + kModel + "} {" + kModel + "}", Expect::Refused);
  // Wrong types and names.
  add("layers_is_a_string.json", R"({"model": {"input": [2], "layers": "linear"}})",
      Expect::Refused);
  add("seed_is_a_string.json", "{\"seed\": \"seven\", " + kModel + "}", Expect::Refused);
  add("parallel_is_a_list.json", "{\"parallel\": [1, 2], " + kModel + "}", Expect::Refused);
  add("layer_is_a_number.json", R"({"model": {"input": [2], "layers": [7]}})", Expect::Refused);
  add("unknown_schedule.json", "{\"parallel\": {\"schedule\": \"2f2b\"}, " + kModel + "}",
      Expect::Refused);
  add("unknown_layer.json", R"({"model": {"input": [2], "layers": [{"type": "quantum"}]}})",
      Expect::Refused);
  add("unknown_key.json", "{\"pipelines\": 4, " + kModel + "}", Expect::Refused);
  add("no_layers.json", R"({"name": "no model"})", Expect::Refused);
  // Deep nesting, where the reader expects a value and where it expects a layer.
  add("deep_arrays.json", repeated("[", 100000) + repeated("]", 100000), Expect::Refused);
  add("deep_objects.json", repeated("{\"a\": ", 100000) + "1" + repeated("}", 100000),
      Expect::Refused);
  add("deep_layer.json",
      R"({"model": {"input": [2], "layers": )" + repeated("[", 50000) + repeated("]", 50000) + "}}",
      Expect::Refused);
  add("deep_name.json",
      "{\"name\": " + repeated("[", 50000) + repeated("]", 50000) + ", " + kModel + "}",
      Expect::Refused);
  add("deep_unclosed.json", repeated("[{\"x\": ", 100000), Expect::Refused);
  // Numbers no field can hold.
  add("huge_seed.json", "{\"seed\": 1e400, " + kModel + "}", Expect::Refused);
  add("huge_integer.json", "{\"parallel\": {\"pp\": 99999999999999999999999999}, " + kModel + "}",
      Expect::Refused);
  add("huge_negative.json", "{\"training\": {\"steps\": -1e300}, " + kModel + "}", Expect::Refused);
  add("fraction_for_integer.json", "{\"parallel\": {\"microbatches\": 2.5}, " + kModel + "}",
      Expect::Refused);
  add("int_overflow.json", "{\"parallel\": {\"dp\": 4294967297}, " + kModel + "}", Expect::Refused);
  // Data files picked by mistake.
  add("data/broken.csv", "label,x,y\n0,1.0,2.0\n1,oops\n", Expect::Refused);
  add("data/images.idx", idx_file(3, {1000000000, 28, 28}, 16), Expect::Refused);
  // Experiments whose values need fixing: they open, the problems are listed.
  add("zero_stages.json", "{\"parallel\": {\"pp\": 0}, " + kModel + "}", Expect::OpensWithProblem);
  add("negative_microbatches.json", "{\"parallel\": {\"microbatches\": -3}, " + kModel + "}",
      Expect::OpensWithProblem);
  add("huge_width.json",
      R"({"model": {"input": [2], "layers": [{"type": "linear", "out": 9223372036854775807}]}})",
      Expect::OpensWithProblem);
  add("huge_microbatches.json", "{\"parallel\": {\"microbatches\": 2000000000}, " + kModel + "}",
      Expect::OpensWithProblem);
  add("huge_plan.json", "{\"parallel\": {\"dp\": 2000000000, \"pp\": 2000000000}, " + kModel + "}",
      Expect::OpensWithProblem);
  add("huge_input.json",
      R"({"model": {"input": [2000000000, 2000000000], "layers": [{"type": "linear", "out": 3}]}})",
      Expect::OpensWithProblem);
  // Experiments whose data is missing or malformed: they open; the run fails.
  add("missing_csv.json",
      R"({"data": {"source": "csv", "path": "data/no_such_file.csv"}, )" + kModel + "}",
      Expect::RunFails);
  add("malformed_csv.json",
      R"({"data": {"source": "csv", "path": "data/broken.csv"}, )" + kModel + "}",
      Expect::RunFails);
  add("missing_idx_folder.json",
      R"({"data": {"source": "idx", "path": "data/no_such_folder"}, )" + kModel + "}",
      Expect::RunFails);
  // An IDX pair whose headers claim a billion images: refused when opened by
  // mistake, and a failed run as an experiment's data.
  add("mnist/train-images-idx3-ubyte", idx_file(3, {1000000000, 28, 28}, 100), Expect::Refused);
  add("mnist/train-labels-idx1-ubyte", idx_file(1, {1000000000}, 100), Expect::Refused);
  add("lying_idx_header.json",
      R"({"data": {"source": "idx", "path": "mnist"}, "model": {"input": [784], "layers": [{"type": "linear", "out": 10}]}})",
      Expect::RunFails);
  add("data_is_an_experiment.json",
      R"({"data": {"source": "csv", "path": "data_is_an_experiment.json"}, )" + kModel + "}",
      Expect::RunFails);
  return files;
}

}  // namespace

class MalformedFilesTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::use_test_settings(); }

  void everyFileUnderTheFolderLeavesTheAppUpAndSaysWhatIsWrong() {
    QTemporaryDir scratch;
    QVERIFY(scratch.isValid());
    QVERIFY(QDir(scratch.path()).mkdir("malformed"));
    const QDir folder(scratch.filePath("malformed"));
    const std::map<QString, Expect> expected = write_malformed_folder(folder);
    QVERIFY(!QTest::currentTestFailed());

    // The experiment on screen: opened from a file, then edited and not saved.
    const QString good = scratch.filePath("good.json");
    Experiment experiment = default_experiment();
    experiment.name = "the good one";
    save_experiment(experiment, good.toStdString());
    MainWindow window;
    window.setSaveQuestion([](const QString&) { return QMessageBox::Discard; });

    int opened = 0;
    QDirIterator entries(folder.path(), QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (entries.hasNext()) {
      const QString path = entries.next();
      const QString name = folder.relativeFilePath(path);
      const auto expect = expected.find(name);
      QVERIFY2(expect != expected.end(), qPrintable(name + " has no expectation"));
      ++opened;

      QVERIFY(window.openFile(good));
      window.document()->edit([](Experiment& e) { e.training.steps = 123; });
      const std::string before = experiment_to_json(window.document()->experiment());

      const bool accepted = window.openFile(path);
      QVERIFY2(accepted == (expect->second != Expect::Refused), qPrintable(name));
      if (!accepted) {
        QVERIFY2(window.notice().contains(QFileInfo(path).fileName()),
                 qPrintable(name + ": " + window.notice()));
        QVERIFY2(experiment_to_json(window.document()->experiment()) == before, qPrintable(name));
        QCOMPARE(window.document()->filePath(), QFileInfo(good).absoluteFilePath());
        QVERIFY2(window.document()->isDirty(), qPrintable(name));
        continue;
      }
      window.predictor()->updateNow();  // not after the edit debounce
      if (expect->second == Expect::OpensWithProblem) {
        QVERIFY2(!window.shownProblems().isEmpty(), qPrintable(name));
        QVERIFY2(!window.startRun(), qPrintable(name));
        continue;
      }
      // Expect::RunFails: nothing to complain about until the data is read.
      RunController* run = window.runController();
      QVERIFY2(window.startRun(), qPrintable(name + ": " + window.shownProblems().join("; ")));
      QTRY_VERIFY_WITH_TIMEOUT(!run->isActive(), kRunTimeoutMs);
      QVERIFY2(run->phase() == RunController::Phase::Failed, qPrintable(name));
      QVERIFY2(!run->errorText().isEmpty(), qPrintable(name));
      QVERIFY2(window.shownProblems().join(' ').contains(run->errorText()),
               qPrintable(name + ": " + run->errorText()));
    }
    QCOMPARE(opened, int(expected.size()));
  }
};

QTEST_MAIN(MalformedFilesTest)
#include "malformed_files_test.moc"
