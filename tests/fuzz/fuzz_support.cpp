#include "tests/fuzz/fuzz_support.h"

#include <cstdio>
#include <cstdlib>

#include "core/data/dataset.h"
#include "core/io/experiment_io.h"
#include "core/sim/experiment_prediction.h"
#include "core/sim/predicted_memory.h"
#include "core/runtime/host_memory_check.h"
#include "core/schedule/lowering.h"
#include "core/text/utf8.h"

namespace pipelab::fuzz {
namespace {

// Longer than any message PipeLab writes: two escaped paths and a list of names.
constexpr size_t kMaxMessageBytes = 4096;

// Plans are simulated only up to this many ops: larger ones run the same code
// for longer, and their limit (kMaxScheduleOps) is checked before anything is
// built.
constexpr double kMaxFuzzedScheduleOps = 10000;

// A machine with 16 GiB free, for the pre-flight.
constexpr int64_t kAvailableHostMemory = int64_t{16} << 30;

[[noreturn]] void fail(const char* why, std::string_view message) {
  std::fprintf(stderr, "unsafe message (%s): %.*s\n", why, static_cast<int>(message.size()),
               message.data());
  std::abort();
}

}  // namespace

bool small_enough_to_simulate(const ParallelPlan& plan, int steps) {
  return schedule_size_estimate(plan, steps) <= kMaxFuzzedScheduleOps;
}

void require_safe_message(std::string_view message) {
  if (!is_valid_utf8(message)) fail("invalid UTF-8", message);
  if (message.size() > kMaxMessageBytes) fail("too long", message);
  for (char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) fail("control character", message);
  }
}

std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

void open_like_the_app(const Experiment& experiment) {
  const std::vector<std::string> problems = validate_experiment(experiment);
  for (const std::string& problem : problems) require_safe_message(problem);
  if (!problems.empty() || !small_enough_to_simulate(experiment.parallel, 0)) return;
  // A valid experiment predicts: validate_experiment promises that, so an
  // exception from here on escapes and is a finding.
  predict_experiment(experiment);
  const std::vector<int64_t> peaks = predicted_peak_bytes(experiment);
  try {
    check_host_memory(experiment, peaks, kAvailableHostMemory);
  } catch (const ExperimentError& error) {
    require_safe_message(error.what());
  }
}

}  // namespace pipelab::fuzz
