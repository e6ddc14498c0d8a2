// Numbers as short, human-readable text for labels, tables and tooltips:
// "12.5 MiB", "1.3 M", "450 µs". Locale-independent so tests can read them.
#pragma once

#include <QString>
#include <cstdint>

namespace pipelab {

QString bytes_text(double bytes);       // "512 B", "12.5 KiB", "3.0 MiB", "1.20 GiB"
QString count_text(double count);       // "950", "12.5 k", "1.3 M", "4.0 G"
QString duration_text(double seconds);  // "3.20 s", "12.4 ms", "450 µs", "80 ns"
QString percent_text(double fraction);  // 0.125 -> "12.5 %"; NaN -> "—"
// A time on a trace's clock: seconds as duration_text, abstract units as "12.5 units".
QString trace_time_text(double value, bool unit_time);

}  // namespace pipelab
