#include "gpu/comm/rank_comm_plan.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "core/comm/message_tag.h"
#include "core/schedule/op_kind.h"

namespace pipelab::gpu {
namespace {

// The tags of the messages `from` sends to `to`, in `device`'s op order
// (`device` is `from` for the sends, `to` for the receives).
std::vector<MessageTag> link_tags(const Schedule& schedule, int device, int peer,
                                  MessageEnd end) {
  std::vector<MessageTag> tags;
  for (const Op& op : schedule.devices.at(static_cast<size_t>(device)))
    if (op.peer == peer && op_kind_facts(op.kind).message_end == end)
      tags.push_back(message_tag(op));
  return tags;
}

// How `devices` (a group's members or a link's two ends) cross ranks, and on
// which ranks, in the devices' order. `nccl`: whether NCCL between ranks is
// possible at all.
RankPath path_of(const std::vector<int>& devices, const std::vector<int>& rank_of_device,
                 int rank_count, bool nccl, std::vector<int>& ranks) {
  ranks.clear();
  for (int device : devices) {
    if (device < 0 || device >= static_cast<int>(rank_of_device.size()))
      throw std::invalid_argument("rank plan: device " + std::to_string(device) +
                                  " is not one of the run's " +
                                  std::to_string(rank_of_device.size()));
    const int rank = rank_of_device[static_cast<size_t>(device)];
    if (rank < 0 || rank >= rank_count)
      throw std::invalid_argument("rank plan: device " + std::to_string(device) + " is on rank " +
                                  std::to_string(rank) + ", not one of the " +
                                  std::to_string(rank_count) + " ranks");
    ranks.push_back(rank);
  }
  const std::set<int> distinct_ranks(ranks.begin(), ranks.end());
  if (distinct_ranks.size() < 2) return RankPath::InProcess;
  const bool one_device_per_rank = distinct_ranks.size() == ranks.size();
  return nccl && one_device_per_rank ? RankPath::Nccl : RankPath::HostStaging;
}

}  // namespace

std::vector<std::pair<int, int>> directed_message_links(const Schedule& schedule) {
  std::set<std::pair<int, int>> links;
  for (const std::vector<Op>& ops : schedule.devices)
    for (const Op& op : ops)
      if (is_send(op.kind)) links.insert({op.device, op.peer});
  return {links.begin(), links.end()};
}

bool in_order_link(const Schedule& schedule, int from, int to) {
  return link_tags(schedule, from, to, MessageEnd::Send) ==
         link_tags(schedule, to, from, MessageEnd::Receive);
}

RankCommPlan plan_rank_communicators(const Schedule& schedule,
                                     const std::vector<CollectiveGroup>& groups,
                                     const std::vector<int>& rank_of_device,
                                     const std::vector<std::string>& gpu_of_rank, bool nccl) {
  RankCommPlan plan;
  // The world spans every rank: NCCL only when no two ranks share a GPU.
  const bool gpu_each =
      std::set<std::string>(gpu_of_rank.begin(), gpu_of_rank.end()).size() == gpu_of_rank.size();
  const int rank_count = static_cast<int>(gpu_of_rank.size());
  std::vector<int> ranks;
  auto route = [&](const std::vector<int>& devices, bool in_order,
                   const std::vector<GroupCollective>& collectives) {
    RankRoute result;
    result.path = path_of(devices, rank_of_device, rank_count, nccl && gpu_each, ranks);
    if (result.path == RankPath::Nccl && !in_order) result.path = RankPath::HostStaging;
    if (result.path == RankPath::Nccl) {
      result.communicator = static_cast<int>(plan.communicators.size());
      plan.communicators.push_back({ranks, devices, collectives.empty(), collectives});
    }
    return result;
  };
  for (const CollectiveGroup& group : groups)
    plan.groups.push_back(route(group.members, true, group.collectives));
  for (const auto& [from, to] : directed_message_links(schedule))
    plan.links[{from, to}] = route({from, to}, in_order_link(schedule, from, to), {});
  return plan;
}

std::vector<RankWarmUp> rank_warm_ups(const RankCommPlan& plan, int rank) {
  std::vector<RankWarmUp> steps;
  for (size_t index = 0; index < plan.communicators.size(); ++index) {
    const int i = static_cast<int>(index);
    if (split_color(plan, i, rank) == kNoColor) continue;
    const RankCommunicator& communicator = plan.communicators[index];
    if (communicator.point_to_point) {
      const bool sender = split_key(plan, i, rank) == 0;
      steps.push_back({i, sender ? RankWarmUp::Kind::Send : RankWarmUp::Kind::Receive});
      continue;
    }
    for (GroupCollective collective : communicator.collectives)
      steps.push_back({i, RankWarmUp::Kind::Collective, collective});
  }
  return steps;
}

std::string describe_warm_up(const RankCommPlan& plan, const RankWarmUp& step) {
  const RankCommunicator& communicator =
      plan.communicators.at(static_cast<size_t>(step.communicator));
  std::string what;
  if (step.kind == RankWarmUp::Kind::Collective) {
    std::string ranks;
    for (int rank : communicator.ranks) ranks += (ranks.empty() ? "" : ", ") + std::to_string(rank);
    what = std::string("the ") + group_collective_name(step.collective) + " of ranks " + ranks;
  } else {
    what = "the link from rank " + std::to_string(communicator.ranks.at(0)) + " to rank " +
           std::to_string(communicator.ranks.at(1));
  }
  return "warming up communicator " + std::to_string(step.communicator) + " (" + what + ")";
}

int communicators_on_rank(const RankCommPlan& plan, int rank) {
  int count = plan.needs_world() ? 1 : 0;
  for (size_t index = 0; index < plan.communicators.size(); ++index)
    count += split_color(plan, static_cast<int>(index), rank) != kNoColor;
  return count;
}

std::map<std::pair<int, int>, int> nccl_links_of(const RankCommPlan& plan, int first_device,
                                                 int device_count) {
  auto hosted = [&](int device) {
    return device >= first_device && device < first_device + device_count;
  };
  std::map<std::pair<int, int>, int> links;
  for (const auto& [link, route] : plan.links)
    if (route.path == RankPath::Nccl && (hosted(link.first) || hosted(link.second)))
      links[link] = route.communicator;
  return links;
}

int split_color(const RankCommPlan& plan, int index, int rank) {
  const std::vector<int>& ranks = plan.communicators.at(static_cast<size_t>(index)).ranks;
  return std::find(ranks.begin(), ranks.end(), rank) == ranks.end() ? kNoColor : 0;
}

int split_key(const RankCommPlan& plan, int index, int rank) {
  const std::vector<int>& ranks = plan.communicators.at(static_cast<size_t>(index)).ranks;
  const auto found = std::find(ranks.begin(), ranks.end(), rank);
  return found == ranks.end() ? 0 : static_cast<int>(found - ranks.begin());
}

namespace {
constexpr int64_t kExactInFloat = int64_t{1} << 24;  // every whole number up to it
}  // namespace

std::array<float, 2> shape_message(int64_t rows, int64_t cols) {
  for (int64_t dimension : {rows, cols})
    if (dimension < 0 || dimension > kExactInFloat)
      throw std::invalid_argument("a message between ranks on NCCL has a dimension of " +
                                  std::to_string(dimension) + ", outside 0 .. 2^24");
  return {static_cast<float>(rows), static_cast<float>(cols)};
}

std::pair<int64_t, int64_t> message_shape(std::span<const float> message) {
  auto dimension = [](float value) {
    if (!(value >= 0 && value <= static_cast<float>(kExactInFloat)) ||
        value != static_cast<float>(static_cast<int64_t>(value)))
      throw std::invalid_argument("a shape message between ranks holds " + std::to_string(value) +
                                  ", not a dimension");
    return static_cast<int64_t>(value);
  };
  if (message.size() != 2)
    throw std::invalid_argument("a shape message between ranks has " +
                                std::to_string(message.size()) + " values, not 2");
  return {dimension(message[0]), dimension(message[1])};
}

std::string describe_rank_paths(const RankCommPlan& plan) {
  int nccl_groups = 0, staged_groups = 0, nccl_links = 0, staged_links = 0;
  for (const RankRoute& group : plan.groups) {
    nccl_groups += group.path == RankPath::Nccl;
    staged_groups += group.path == RankPath::HostStaging;
  }
  for (const auto& [link, route] : plan.links) {
    nccl_links += route.path == RankPath::Nccl;
    staged_links += route.path == RankPath::HostStaging;
  }
  auto count = [](int n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  // Links only when the plan has some (a schedule with no pipeline has none).
  const bool links = !plan.links.empty();
  return "between ranks: " + count(nccl_groups, "group") +
         (links ? " and " + count(nccl_links, "link") : "") + " on NCCL, " +
         count(staged_groups, "group") + (links ? " and " + count(staged_links, "link") : "") +
         " staged through host memory";
}

}  // namespace pipelab::gpu
