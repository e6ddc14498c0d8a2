#include "core/sim/timeline_text.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace pipelab {
namespace {

// One box of the grid: slots [begin, end) of one device.
struct Box {
  long begin = 0;
  long end = 0;
  std::string label;
};

std::string box_label(const Op& op) {
  std::string label = op_kind_facts(op.kind).short_name;
  if (op.microbatch >= 0) label += std::to_string(op.microbatch);
  if (op.chunk > 0) {
    label += '.';
    label += std::to_string(op.chunk);
  }
  return label;
}

std::string padded(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

}  // namespace

std::string format_timeline_grid(const Trace& trace, int device_count, double slot) {
  if (!(slot > 0))
    throw std::invalid_argument("timeline slot must be > 0 (one unit cost is a good slot)");
  if (device_count < 0) throw std::invalid_argument("timeline device_count must be >= 0");

  std::vector<std::vector<Box>> rows(device_count);
  size_t cell_width = 2;
  long slots = 0;
  for (const TraceEvent& event : trace.events) {
    if (!is_compute(event.op.kind) || event.device < 0 || event.device >= device_count) continue;
    if (!(event.t_end > event.t_begin)) continue;  // takes no time: nothing to draw
    Box box;
    box.begin = std::lround(event.t_begin / slot);
    box.end = std::max(std::lround(event.t_end / slot), box.begin + 1);
    box.label = box_label(event.op);
    cell_width = std::max(cell_width, box.label.size());
    slots = std::max(slots, box.end);
    rows[event.device].push_back(box);
  }

  const std::string last_row_name = "dev " + std::to_string(std::max(device_count - 1, 0));
  const size_t name_width = std::max(last_row_name.size(), std::string("slot").size()) + 1;

  std::string text = padded("slot", name_width) + "|";
  for (long k = 0; k < slots; ++k) {
    const std::string number = std::to_string(k);
    text += padded(number.size() <= cell_width ? number : "", cell_width) + "|";
  }
  text += "\n";

  for (int device = 0; device < device_count; ++device) {
    std::vector<Box>& boxes = rows[device];
    std::sort(boxes.begin(), boxes.end(),
              [](const Box& a, const Box& b) { return a.begin < b.begin; });
    text += padded("dev " + std::to_string(device), name_width) + "|";
    long k = 0;
    for (const Box& box : boxes) {
      const long begin = std::max(box.begin, k);  // rounding may overlap a neighbour
      if (box.end <= begin) continue;
      for (; k < begin; ++k) text += std::string(cell_width, ' ') + "|";
      const long span = box.end - begin;
      text += padded(box.label, span * cell_width + (span - 1)) + "|";
      k = box.end;
    }
    for (; k < slots; ++k) text += std::string(cell_width, ' ') + "|";
    text += "\n";
  }
  return text;
}

}  // namespace pipelab
