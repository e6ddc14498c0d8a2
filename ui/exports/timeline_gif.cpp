#include "ui/exports/timeline_gif.h"

#include <gif_lib.h>

#include <QCoreApplication>
#include <QFile>
#include <QImage>
#include <QVector>
#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "ui/timeline/timeline_chart.h"

namespace pipelab {
namespace {

QString tr_gif(const char* text) { return QCoreApplication::translate("TimelineGif", text); }

constexpr Qt::ImageConversionFlags kNoDither = Qt::ThresholdDither | Qt::AvoidDither;

// Draws the frames one at a time (a frame is megabytes; a long animation of
// many devices would not fit in memory all at once) on one off-screen chart.
class FrameRenderer {
 public:
  FrameRenderer(const Trace& trace, const QString& title, QSize size, int frames)
      : size_(size), frames_(frames) {
    chart_.resize(size);
    chart_.setTitle(title);
    chart_.showTrace(trace);
    chart_.fitAll();  // the whole trace's range, so the axis stays put while bars appear
    begin_ = std::numeric_limits<double>::infinity();
    end_ = -begin_;
    for (const TraceEvent& event : trace.events) {
      begin_ = std::min(begin_, event.t_begin);
      end_ = std::max(end_, event.t_end);
    }
  }

  QSize size() const { return size_; }

  // The last frame shows everything; the others cut the timeline at evenly
  // spaced moments.
  QImage frame(int index) {
    chart_.setNow(index == frames_ - 1 ? std::numeric_limits<double>::infinity()
                                       : begin_ + (end_ - begin_) * index / (frames_ - 1));
    return chart_.toPixmap(size_.width(), size_.height()).toImage();
  }

 private:
  TimelineChart chart_;
  QSize size_;
  int frames_;
  double begin_;
  double end_;
};

// giflib reports failures by code; GifErrorString says what it means.
QString gif_error(const QString& path, int code) {
  return tr_gif("cannot write %1: %2").arg(path, QString::fromLatin1(GifErrorString(code)));
}

// giflib writes through this, so the file is Qt's (any path, the usual permissions).
int write_to_file(GifFileType* gif, const GifByteType* bytes, int length) {
  auto* file = static_cast<QFile*>(gif->UserData);
  return static_cast<int>(file->write(reinterpret_cast<const char*>(bytes), length));
}

// The smallest rectangle where `image` differs from `previous`; frames after
// the first store only it (the rest of the previous frame stays on screen).
// A frame identical to the previous one stores one unchanged pixel.
QRect changed_rect(const QImage& previous, const QImage& image) {
  int top = image.height();
  int bottom = -1;
  int left = image.width();
  int right = -1;
  for (int row = 0; row < image.height(); ++row) {
    const uchar* a = previous.constScanLine(row);
    const uchar* b = image.constScanLine(row);
    for (int column = 0; column < image.width(); ++column) {
      if (a[column] == b[column]) continue;
      top = std::min(top, row);
      bottom = row;
      left = std::min(left, column);
      right = std::max(right, column);
    }
  }
  return bottom < 0 ? QRect(0, 0, 1, 1) : QRect(QPoint(left, top), QPoint(right, bottom));
}

bool write_gif(FrameRenderer& renderer, const TimelineGifOptions& options, const QString& path,
               QString* error) {
  // One palette for all frames, from the finished timeline: it holds every
  // colour the earlier frames use. Every frame, the last too, is then mapped
  // onto it.
  const QVector<QRgb> colour_table = renderer.frame(options.frames - 1)
                                         .convertToFormat(QImage::Format_Indexed8, kNoDither)
                                         .colorTable();
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    *error = tr_gif("cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  int code = 0;
  GifFileType* gif = EGifOpen(&file, write_to_file, &code);
  if (!gif) {
    *error = gif_error(path, code);
    return false;
  }
  // A GIF palette has a power-of-two size; the unused entries stay black.
  const int colours = static_cast<int>(colour_table.size());
  int palette_size = 2;
  while (palette_size < colours) palette_size *= 2;
  std::vector<GifColorType> palette(static_cast<size_t>(palette_size), GifColorType{0, 0, 0});
  for (int i = 0; i < colours; ++i) {
    const QRgb rgb = colour_table[i];
    palette[static_cast<size_t>(i)] =
        GifColorType{static_cast<GifByteType>(qRed(rgb)), static_cast<GifByteType>(qGreen(rgb)),
                     static_cast<GifByteType>(qBlue(rgb))};
  }
  std::unique_ptr<ColorMapObject, void (*)(ColorMapObject*)> map(
      GifMakeMapObject(palette_size, palette.data()), GifFreeMapObject);
  const int width = renderer.size().width();
  const int height = renderer.size().height();

  EGifSetGifVersion(gif, true);  // GIF89a: frame delays and looping
  // NETSCAPE2.0 application block: loop forever (count 0).
  static const char kLoopApplication[] = "NETSCAPE2.0";
  const GifByteType loop_forever[3] = {1, 0, 0};
  bool ok = map && EGifPutScreenDesc(gif, width, height, 8, 0, map.get()) != GIF_ERROR &&
            EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) != GIF_ERROR &&
            EGifPutExtensionBlock(gif, 11, kLoopApplication) != GIF_ERROR &&
            EGifPutExtensionBlock(gif, 3, loop_forever) != GIF_ERROR &&
            EGifPutExtensionTrailer(gif) != GIF_ERROR;
  QImage previous;
  for (int frame = 0; ok && frame < options.frames; ++frame) {
    const bool last = frame == options.frames - 1;
    GraphicsControlBlock control{};
    control.DisposalMode = DISPOSE_DO_NOT;
    control.DelayTime = (last ? options.final_hold_ms : options.frame_delay_ms) / 10;
    control.TransparentColor = NO_TRANSPARENT_COLOR;
    GifByteType extension[4];
    const size_t extension_size = EGifGCBToExtension(&control, extension);
    const QImage image =
        renderer.frame(frame).convertToFormat(QImage::Format_Indexed8, colour_table, kNoDither);
    const QRect area = previous.isNull() ? image.rect() : changed_rect(previous, image);
    ok = EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, static_cast<int>(extension_size),
                          extension) != GIF_ERROR &&
         EGifPutImageDesc(gif, area.left(), area.top(), area.width(), area.height(), false,
                          nullptr) != GIF_ERROR;
    for (int row = area.top(); ok && row <= area.bottom(); ++row) {
      // giflib takes a non-const line but only reads it.
      auto* line = const_cast<GifPixelType*>(image.constScanLine(row)) + area.left();
      ok = EGifPutLine(gif, line, area.width()) != GIF_ERROR;
    }
    previous = image;
  }
  if (!ok) code = gif->Error;
  int close_code = 0;
  const bool closed = EGifCloseFile(gif, &close_code) != GIF_ERROR;  // frees gif either way
  if (ok && closed && !file.flush()) {
    *error = tr_gif("cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  if (!ok || !closed) {
    *error = gif_error(path, ok ? close_code : code);
    return false;
  }
  return true;
}

}  // namespace

bool export_timeline_gif(const Trace& trace, const QString& title, const QString& path,
                         QString* error, const TimelineGifOptions& options) {
  QString ignored;
  if (!error) error = &ignored;
  if (trace.events.empty()) {
    *error =
        tr_gif("nothing to animate: the timeline is empty (fix the experiment's problems first)");
    return false;
  }
  if (options.frames < 2 || options.frames > 1000 || options.size.width() < 200) {
    *error =
        tr_gif("an animated timeline needs 2 to 1000 frames and a width of at least 200 pixels");
    return false;
  }
  QSize size = options.size;
  if (size.height() <= 0)
    size.setHeight(std::min(150 + 34 * std::max(device_count(trace), 1), options.max_auto_height));
  FrameRenderer renderer(trace, title, size, options.frames);
  return write_gif(renderer, options, path, error);
}

}  // namespace pipelab
