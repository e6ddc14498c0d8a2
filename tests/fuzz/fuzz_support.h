// What every fuzz target shares: the rule that error messages are safe to
// show, and opening an experiment the way the CLI and the app do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/io/experiment.h"

namespace pipelab::fuzz {

// Aborts (a finding) unless `message` is one line of valid UTF-8 without
// control characters, of a length a person can read.
void require_safe_message(std::string_view message);

// The fuzzer's bytes as text, and split into lines at '\n'.
std::string as_text(const uint8_t* data, size_t size);
std::vector<std::string> split_lines(std::string_view text);

// Whether a valid plan's schedule over `steps` steps (0: the default window) is
// small enough to build and simulate many times a second.
bool small_enough_to_simulate(const ParallelPlan& plan, int steps);

// What the app does after loading a file, and the CLI after --config and --set:
// validate, then (when valid) partition, profile, build and lower the schedule,
// simulate it and run the host-memory pre-flight. Errors a user can cause are
// checked with require_safe_message; any other exception escapes (a finding).
void open_like_the_app(const Experiment& experiment);

}  // namespace pipelab::fuzz
