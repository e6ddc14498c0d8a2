#include "core/text/byte_size.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace pipelab {
namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::optional<double> unit_bytes(const std::string& unit) {
  const std::string name = lower(unit);
  if (name.empty() || name == "b") return 1.0;
  const std::string prefixes = "kmgt";
  if (name.size() < 2 || prefixes.find(name[0]) == std::string::npos) return std::nullopt;
  const int power = static_cast<int>(prefixes.find(name[0])) + 1;
  if (name.substr(1) == "b") return std::pow(1000.0, power);
  if (name.substr(1) == "ib") return std::pow(1024.0, power);
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> parse_byte_size(const std::string& text) {
  size_t number_end = 0;
  while (number_end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[number_end])) || text[number_end] == '.'))
    ++number_end;
  if (number_end == 0) return std::nullopt;
  char* parsed_end = nullptr;
  const std::string number_text = text.substr(0, number_end);
  const double number = std::strtod(number_text.c_str(), &parsed_end);
  if (parsed_end != number_text.c_str() + number_text.size()) return std::nullopt;  // "1.2.3"
  size_t unit_begin = number_end;
  while (unit_begin < text.size() && text[unit_begin] == ' ') ++unit_begin;
  const std::optional<double> unit = unit_bytes(text.substr(unit_begin));
  if (!unit) return std::nullopt;
  const double bytes = std::round(number * *unit);
  if (!(bytes >= 0) || bytes > std::ldexp(1.0, 62)) return std::nullopt;
  return static_cast<int64_t>(bytes);
}

std::string byte_size_text(int64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  double scaled = static_cast<double>(bytes);
  while (unit + 1 < 5 && scaled >= 1024) {
    scaled /= 1024;
    ++unit;
  }
  if (unit == 0) return std::to_string(bytes) + " B";
  char text[48];
  std::snprintf(text, sizeof text, "%.2f %s", std::ceil(scaled * 100) / 100, kUnits[unit]);
  return text;
}

}  // namespace pipelab
