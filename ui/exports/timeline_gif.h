// Animated timeline for slides: a trace's timeline unfolding in time, bars
// appearing as their ops start, written as a looping animated GIF (giflib).
// Frames are drawn off-screen by the same TimelineChart the window shows, at
// evenly spaced moments of the trace, the last one showing everything and held
// longer. All frames share one palette, taken from the last (fullest) frame.
#pragma once

#include <QSize>
#include <QString>

#include "core/trace/trace_events.h"

namespace pipelab {

struct TimelineGifOptions {
  QSize size{1200, 0};         // height 0: room for every device's row, up to max_auto_height
  int max_auto_height = 1600;  // past it rows are labelled every few and bars thin, as on screen
  int frames = 40;             // at least 2
  int frame_delay_ms = 100;    // between frames (GIF counts hundredths of a second)
  int final_hold_ms = 2000;    // how long the finished timeline stays before the loop restarts
};

// Writes `trace` (one step, or an asynchronous schedule's window) under
// `title` to `path`. False with *error set to one line when the trace is empty,
// the options are out of range or the file cannot be written.
bool export_timeline_gif(const Trace& trace, const QString& title, const QString& path,
                         QString* error, const TimelineGifOptions& options = {});

}  // namespace pipelab
