#include "ui/number_text.h"

#include <QCoreApplication>
#include <cmath>

namespace pipelab {
namespace {

// Three significant digits at most: "1.23", "12.3", "123".
QString three_digits(double value) {
  const double magnitude = std::fabs(value);
  const int decimals = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : 2;
  return QString::number(value, 'f', decimals);
}

}  // namespace

QString bytes_text(double bytes) {
  if (!std::isfinite(bytes)) return QStringLiteral("—");
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  double value = bytes;
  while (std::fabs(value) >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return QString::number(static_cast<int64_t>(value)) + " B";
  return three_digits(value) + " " + kUnits[unit];
}

QString count_text(double count) {
  if (!std::isfinite(count)) return QStringLiteral("—");
  static const char* const kSuffixes[] = {"", " k", " M", " G", " T", " P"};
  int suffix = 0;
  double value = count;
  while (std::fabs(value) >= 1000 && suffix < 5) {
    value /= 1000;
    ++suffix;
  }
  if (suffix == 0) return QString::number(static_cast<int64_t>(std::llround(value)));
  return three_digits(value) + kSuffixes[suffix];
}

QString duration_text(double seconds) {
  if (!std::isfinite(seconds)) return QStringLiteral("—");
  const double magnitude = std::fabs(seconds);
  if (magnitude == 0) return QStringLiteral("0 s");
  if (magnitude >= 1) return three_digits(seconds) + " s";
  if (magnitude >= 1e-3) return three_digits(seconds * 1e3) + " ms";
  if (magnitude >= 1e-6) return three_digits(seconds * 1e6) + QStringLiteral(" µs");
  return three_digits(seconds * 1e9) + " ns";
}

QString percent_text(double fraction) {
  if (!std::isfinite(fraction)) return QStringLiteral("—");
  return QString::number(fraction * 100, 'f', 1) + " %";
}

QString trace_time_text(double value, bool unit_time) {
  if (unit_time)
    return QCoreApplication::translate("NumberText", "%1 units").arg(three_digits(value));
  return duration_text(value);
}

}  // namespace pipelab
