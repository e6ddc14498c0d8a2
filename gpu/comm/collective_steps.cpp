#include "gpu/comm/collective_steps.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace pipelab::gpu {
namespace {

using Kind = CollectiveStep::Kind;
constexpr int kScratch = CollectiveStep::kScratch;

// Chunk c of the ring's n chunks, [values c / n, values (c + 1) / n) (they
// may differ in size by one).
int64_t chunk_begin(int64_t values, int n, int c) { return values * c / n; }

CollectiveSteps all_reduce(int n, int64_t values) {
  CollectiveSteps plan;
  if (n == 1) return plan;
  for (int c = 0; c < n; ++c) {
    const int64_t begin = chunk_begin(values, n, c);
    const int64_t count = chunk_begin(values, n, c + 1) - begin;
    plan.scratch_values = std::max(plan.scratch_values, count);
    plan.steps.push_back({Kind::Copy, c, begin, kScratch, 0, count});
    for (int k = 1; k < n; ++k)
      plan.steps.push_back({Kind::Add, (c + k) % n, begin, kScratch, 0, count});
    for (int member = 0; member < n; ++member)
      plan.steps.push_back({Kind::Copy, kScratch, 0, member, begin, count});
  }
  return plan;
}

CollectiveSteps all_to_all(int n, int64_t slice) {
  CollectiveSteps plan;
  plan.scratch_values = n > 1 ? slice : 0;
  for (int r = 0; r < n; ++r)
    for (int j = r + 1; j < n; ++j) {
      plan.steps.push_back({Kind::Copy, r, j * slice, kScratch, 0, slice});
      plan.steps.push_back({Kind::Copy, j, r * slice, r, j * slice, slice});
      plan.steps.push_back({Kind::Copy, kScratch, 0, j, r * slice, slice});
    }
  return plan;
}

CollectiveSteps all_gather(int n, int64_t slice) {
  CollectiveSteps plan;
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < n; ++j)
      if (j != r) plan.steps.push_back({Kind::Copy, r, r * slice, j, r * slice, slice});
  return plan;
}

CollectiveSteps reduce_scatter(int n, int64_t slice) {
  CollectiveSteps plan;
  if (n == 1) return plan;
  plan.scratch_values = slice;
  for (int r = 0; r < n; ++r) {
    const int64_t offset = r * slice;
    plan.steps.push_back({Kind::Copy, (r + 1) % n, offset, kScratch, 0, slice});
    for (int k = 2; k <= n; ++k)
      plan.steps.push_back({Kind::Add, (r + k) % n, offset, kScratch, 0, slice});
    plan.steps.push_back({Kind::Copy, kScratch, 0, r, offset, slice});
  }
  return plan;
}

}  // namespace

const char* group_collective_name(GroupCollective collective) {
  switch (collective) {
    case GroupCollective::AllReduce:
      return "all-reduce";
    case GroupCollective::AllToAll:
      return "all-to-all";
    case GroupCollective::AllGather:
      return "all-gather";
    case GroupCollective::ReduceScatter:
      return "reduce-scatter";
  }
  return "collective";
}

CollectiveSteps collective_steps(GroupCollective collective, int members, int64_t values) {
  if (members < 1)
    throw std::invalid_argument("a group collective needs at least one member, got " +
                                std::to_string(members));
  if (collective == GroupCollective::AllReduce) return all_reduce(members, values);
  if (values % members != 0)
    throw std::invalid_argument(std::string("an ") + group_collective_name(collective) + " over " +
                                std::to_string(members) + " members needs a multiple of " +
                                std::to_string(members) + " values, got " + std::to_string(values));
  const int64_t slice = values / members;
  if (collective == GroupCollective::AllToAll) return all_to_all(members, slice);
  if (collective == GroupCollective::AllGather) return all_gather(members, slice);
  return reduce_scatter(members, slice);
}

}  // namespace pipelab::gpu
