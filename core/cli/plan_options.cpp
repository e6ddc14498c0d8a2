#include "core/cli/plan_options.h"

#include <cmath>
#include <sstream>

#include "core/plan/plan_limits.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {
namespace {

std::string valid_schedules() {
  std::string list;
  for (const auto& name : schedule_names()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

}  // namespace

ParallelPlan plan_from_flags(const ParsedArgs& parsed) {
  ParallelPlan plan;
  if (!parsed.has("schedule"))
    throw UsageError("--schedule is required; one of " + valid_schedules());
  const std::string name = parsed.get("schedule");
  auto kind = parse_schedule(name);
  if (!kind) throw UsageError("--schedule " + quoted_excerpt(name) + " is not a schedule; valid: " + valid_schedules());
  plan.schedule = *kind;
  if (!parsed.has("stages")) throw UsageError("--stages is required (pipeline devices, e.g. --stages 4)");
  if (!parsed.has("microbatches"))
    throw UsageError("--microbatches is required (e.g. --microbatches 8)");
  plan.pp = parsed.get_int("stages", 1, 1, kMaxPipelineDevices);
  plan.microbatches = parsed.get_int("microbatches", 1, 1, kMaxMicrobatches);
  plan.chunks = parsed.get_int("chunks", 1, 1, kMaxChunks);
  plan.dp = parsed.get_int("dp", 1, 1, kMaxDataParallel);
  plan.tp = parsed.get_int("tp", 1, 1, kMaxTensorParallel);
  plan.staleness = parsed.get_int("staleness", plan.staleness, 0, kMaxStaleness);
  plan.recompute = parsed.has("recompute");
  if (parsed.has("offload")) {
    auto offload = parse_offload(parsed.get("offload"));
    if (!offload)
      throw UsageError("--offload must be none, activations or optimizer, got " +
                       quoted_excerpt(parsed.get("offload")));
    plan.offload = *offload;
  }
  if (parsed.has("update")) {
    auto update = parse_update(parsed.get("update"));
    if (!update) throw UsageError("--update must be sync or async, got " + quoted_excerpt(parsed.get("update")));
    plan.update = *update;
  }
  const bool v_placement = uses_v_placement(plan.schedule);
  if (v_placement) {
    // zb-v and dualpipev always place two chunks per device in a V; --chunks may only confirm it.
    if (parsed.has("chunks") && plan.chunks != 2)
      throw UsageError("--chunks " + std::to_string(plan.chunks) + " does not fit --schedule " +
                       schedule_name(plan.schedule) + ", which holds exactly 2 chunks per device; "
                       "use --chunks 2 or leave it out");
    plan.chunks = 2;
  }
  if (plan.chunks > 1 && plan.schedule != ScheduleKind::Interleaved1F1B && !v_placement)
    throw UsageError("--chunks " + std::to_string(plan.chunks) +
                     " needs --schedule interleaved-1f1b (other schedules hold one stage per device)");
  if (plan.schedule == ScheduleKind::Interleaved1F1B && !parsed.has("chunks")) plan.chunks = 2;
  return plan;
}

UnitCosts parse_unit_costs(const std::string& text) {
  UnitCosts costs;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw UsageError("--cost item " + quoted_excerpt(item) + " must look like name=value, e.g. f=1,b=1,w=1,comm=0");
    const std::string key = item.substr(0, eq);
    const std::string value_text = item.substr(eq + 1);
    double value = 0;
    try {
      size_t used = 0;
      value = std::stod(value_text, &used);
      if (used != value_text.size()) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      throw UsageError("--cost " + safe_excerpt(key) + " must be a number, got " + quoted_excerpt(value_text));
    }
    if (!std::isfinite(value) || value < 0)
      throw UsageError("--cost " + safe_excerpt(key) + " must be a finite number >= 0, got " +
                       quoted_excerpt(value_text));
    if (key == "f") costs.f = value;
    else if (key == "b") costs.b = value;
    else if (key == "w") costs.w = value;
    else if (key == "comm") costs.comm = value;
    else if (key == "u") costs.u = value;
    else throw UsageError("--cost has no " + quoted_excerpt(key) + "; valid: f, b, w, comm, u");
  }
  if (costs.f + costs.b + costs.w <= 0)
    throw UsageError("--cost needs f, b or w above 0, or nothing takes time");
  return costs;
}

}  // namespace pipelab
