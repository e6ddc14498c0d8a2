#include "core/data/csv_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <vector>

#include "core/data/file_bytes.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {

namespace {

constexpr int32_t kMaxLabel = 65535;  // one-hot targets stay a sane size

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

std::string_view unquote(std::string_view cell) {
  if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') {
    return trim(cell.substr(1, cell.size() - 2));
  }
  return cell;
}

std::vector<std::string_view> split_cells(std::string_view line) {
  std::vector<std::string_view> cells;
  size_t start = 0;
  for (;;) {
    const auto comma = line.find(',', start);
    cells.push_back(unquote(trim(line.substr(start, comma - start))));
    if (comma == std::string_view::npos) return cells;
    start = comma + 1;
  }
}

// The whole cell as a number (std::from_chars: the same in every locale), or
// nothing when any character is left over.
std::optional<double> parse_number(std::string_view cell) {
  if (!cell.empty() && cell.front() == '+') cell.remove_prefix(1);
  if (cell.empty()) return std::nullopt;
  double value = 0.0;
  const auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  if (error != std::errc() || end != cell.data() + cell.size()) return std::nullopt;
  return value;
}

struct CsvPosition {
  const std::string& path;  // escaped for messages
  int64_t line;
  size_t column;  // 0-based; printed 1-based
  std::string where() const {
    return path + ": line " + std::to_string(line) + ", column " + std::to_string(column + 1);
  }
};

float parse_feature(std::string_view cell, const CsvPosition& at) {
  const auto value = parse_number(cell);
  if (!value) {
    if (cell.empty()) throw DataError(at.where() + ": empty cell; every feature needs a number");
    throw DataError(at.where() + ": " + quoted_excerpt(cell) + " is not a number");
  }
  const auto as_float = static_cast<float>(*value);
  if (!std::isfinite(as_float)) {
    throw DataError(at.where() + ": " + quoted_excerpt(cell) + " is not a finite 32-bit number");
  }
  return as_float;
}

int32_t parse_label(std::string_view cell, const CsvPosition& at) {
  const auto value = parse_number(cell);
  if (!value) {
    if (cell.empty()) throw DataError(at.where() + ": empty label cell");
    throw DataError(at.where() + ": label " + quoted_excerpt(cell) + " is not a number");
  }
  if (*value < 0) {
    throw DataError(at.where() + ": label " + safe_excerpt(cell) +
                    " is negative; labels are class numbers 0, 1, 2, ...");
  }
  if (!std::isfinite(*value) || *value != std::floor(*value)) {
    throw DataError(at.where() + ": label " + safe_excerpt(cell) + " is not a whole number");
  }
  if (*value > kMaxLabel) {
    throw DataError(at.where() + ": label " + safe_excerpt(cell) + " is too large (at most " +
                    std::to_string(kMaxLabel) + ")");
  }
  return static_cast<int32_t>(*value);
}

}  // namespace

Dataset read_csv_dataset(const std::string& path, const CsvOptions& options) {
  return parse_csv_dataset(read_file_bytes(path), path, options);
}

Dataset parse_csv_dataset(std::span<const uint8_t> bytes, const std::string& file_path,
                          const CsvOptions& options) {
  const std::string path = path_excerpt(file_path);
  if (bytes.empty()) throw DataError(path + ": file is empty");
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 byte order mark

  Dataset dataset;
  dataset.name = "csv";
  size_t cell_count = 0;   // from the first row; every row must match it
  int64_t first_line = 0;  // where the first row is, for messages
  size_t label_column = 0;
  bool has_header = false;
  int32_t max_label = -1;

  int64_t line_number = 0;
  size_t line_start = 0;
  while (line_start < text.size()) {
    const auto line_end = std::min(text.find('\n', line_start), text.size());
    std::string_view line = text.substr(line_start, line_end - line_start);
    line_start = line_end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;
    const std::vector<std::string_view> cells = split_cells(line);

    if (cell_count == 0) {  // the first row fixes the layout
      cell_count = cells.size();
      first_line = line_number;
      if (cell_count < 2) {
        throw DataError(path + ": line " + std::to_string(line_number) +
                        " has 1 cell; rows need a label column and at least one feature column "
                        "(separated by commas)");
      }
      const auto columns = static_cast<int64_t>(cell_count);
      const int64_t wanted =
          options.label_column < 0 ? columns + options.label_column : options.label_column;
      if (wanted < 0 || wanted >= columns) {
        throw DataError(path + ": label column " + std::to_string(options.label_column) +
                        " is outside the rows' " + std::to_string(columns) + " cells");
      }
      label_column = static_cast<size_t>(wanted);
      dataset.features = columns - 1;
      has_header = std::any_of(cells.begin(), cells.end(),
                               [](std::string_view cell) { return !parse_number(cell); });
      if (has_header) continue;
    }

    if (cells.size() != cell_count) {
      throw DataError(path + ": line " + std::to_string(line_number) + " has " +
                      std::to_string(cells.size()) + " cells but line " +
                      std::to_string(first_line) + " has " + std::to_string(cell_count));
    }
    for (size_t column = 0; column < cells.size(); ++column) {
      const CsvPosition at{path, line_number, column};
      if (column == label_column) {
        const int32_t label = parse_label(cells[column], at);
        dataset.labels.push_back(label);
        max_label = std::max(max_label, label);
      } else {
        dataset.x.push_back(parse_feature(cells[column], at));
      }
    }
    ++dataset.samples;
  }

  if (dataset.samples == 0) {
    throw DataError(
        path + (has_header ? ": holds a header row but no data rows" : ": holds no data rows"));
  }
  dataset.classes = max_label + 1;
  return dataset;
}

}  // namespace pipelab
