// The animated timeline: a GIF that giflib's own reader decodes into the
// frames asked for, at the size asked for, with the bars appearing over time.
#include "ui/exports/timeline_gif.h"

#include <gif_lib.h>

#include <QTemporaryDir>
#include <QtTest>
#include <vector>

#include "core/schedule/lowering.h"
#include "core/sim/simulator.h"
#include "ui/timeline/op_colors.h"
#include "ui_test_support.h"

using namespace pipelab;

namespace {

Trace gpipe_trace(int pp = 2) {
  ParallelPlan plan;
  plan.schedule = ScheduleKind::GPipe;
  plan.pp = pp;
  plan.microbatches = 4;
  return simulate(build_schedule(plan), CostModel::unit(UnitCosts{})).trace;
}

// Pixels of each frame, composed as a viewer shows them (a frame after the
// first paints only its own rectangle over the previous one), counted where
// the colour is close to the forward ops' blue.
std::vector<int> forward_pixels_per_frame(const GifFileType& gif) {
  std::vector<GifByteType> canvas(static_cast<size_t>(gif.SWidth) * gif.SHeight, 0);
  const QColor blue = op_color(OpKind::Forward);
  std::vector<int> counts;
  for (int i = 0; i < gif.ImageCount; ++i) {
    const SavedImage& image = gif.SavedImages[i];
    const GifImageDesc& desc = image.ImageDesc;
    for (int row = 0; row < desc.Height; ++row)
      for (int column = 0; column < desc.Width; ++column)
        canvas[static_cast<size_t>(desc.Top + row) * gif.SWidth + desc.Left + column] =
            image.RasterBits[static_cast<size_t>(row) * desc.Width + column];
    const ColorMapObject* map = desc.ColorMap ? desc.ColorMap : gif.SColorMap;
    int count = 0;
    for (GifByteType index : canvas) {
      const GifColorType& c = map->Colors[index];
      if (std::abs(c.Red - blue.red()) + std::abs(c.Green - blue.green()) +
              std::abs(c.Blue - blue.blue()) <
          40)
        ++count;
    }
    counts.push_back(count);
  }
  return counts;
}

}  // namespace

class TimelineGifTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::use_test_settings(); }

  void decodesToTheFramesAndSizeAskedFor() {
    QTemporaryDir folder;
    const QString path = folder.filePath("gpipe.gif");
    TimelineGifOptions options;
    options.size = QSize(640, 220);
    options.frames = 7;
    QString error;
    QVERIFY2(export_timeline_gif(gpipe_trace(), QStringLiteral("GPipe"), path, &error, options),
             qPrintable(error));

    int code = 0;
    GifFileType* gif = DGifOpenFileName(path.toLocal8Bit().constData(), &code);
    QVERIFY2(gif, GifErrorString(code));
    QCOMPARE(DGifSlurp(gif), GIF_OK);
    QCOMPARE(gif->ImageCount, 7);
    QCOMPARE(gif->SWidth, 640);
    QCOMPARE(gif->SHeight, 220);
    // Every frame has its delay, the last one held longest.
    GraphicsControlBlock first{};
    GraphicsControlBlock last{};
    QCOMPARE(DGifSavedExtensionToGCB(gif, 0, &first), GIF_OK);
    QCOMPARE(DGifSavedExtensionToGCB(gif, 6, &last), GIF_OK);
    QCOMPARE(first.DelayTime, options.frame_delay_ms / 10);
    QCOMPARE(last.DelayTime, options.final_hold_ms / 10);
    // The bars appear in time order: more forward blue frame after frame.
    const std::vector<int> blue = forward_pixels_per_frame(*gif);
    QVERIFY(blue.front() < blue.back());
    for (size_t i = 1; i < blue.size(); ++i) QVERIFY(blue[i - 1] <= blue[i]);
    QVERIFY(blue.back() > 100);
    DGifCloseFile(gif, &code);
  }

  void manyDevicesStayWithinASlidesHeight() {
    QTemporaryDir folder;
    const QString path = folder.filePath("deep.gif");
    TimelineGifOptions options;
    options.size = QSize(400, 0);  // height: one row per device, up to a cap
    options.frames = 2;
    QString error;
    QVERIFY2(export_timeline_gif(gpipe_trace(64), QString(), path, &error, options),
             qPrintable(error));
    int code = 0;
    GifFileType* gif = DGifOpenFileName(path.toLocal8Bit().constData(), &code);
    QVERIFY2(gif, GifErrorString(code));
    QCOMPARE(DGifSlurp(gif), GIF_OK);
    QCOMPARE(gif->ImageCount, 2);
    QCOMPARE(gif->SWidth, 400);
    QCOMPARE(gif->SHeight, options.max_auto_height);  // 64 rows would want more
    DGifCloseFile(gif, &code);
  }

  void refusesWhatItCannotDoInOneLine() {
    QTemporaryDir folder;
    QString error;
    QVERIFY(!export_timeline_gif(Trace{}, QString(), folder.filePath("a.gif"), &error));
    QVERIFY(error.contains("empty"));
    TimelineGifOptions one_frame;
    one_frame.frames = 1;
    QVERIFY(!export_timeline_gif(gpipe_trace(), QString(), folder.filePath("b.gif"), &error,
                                 one_frame));
    QVERIFY(error.contains("frames"));
    const QString nowhere = folder.filePath("no/such/folder/c.gif");
    QVERIFY(!export_timeline_gif(gpipe_trace(), QString(), nowhere, &error));
    QVERIFY2(error.contains(nowhere) && !error.contains('\n'), qPrintable(error));
  }
};

QTEST_MAIN(TimelineGifTest)
#include "timeline_gif_test.moc"
