#include "gpu/executor/rank_memory_check.h"

#include <algorithm>
#include <cassert>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "gpu/executor/device_mapping.h"
#include "gpu/memory/out_of_memory.h"

namespace pipelab::gpu {
namespace {

// Every virtual device's estimate, by device number, from the reports. Throws
// std::invalid_argument when two reports name one device.
std::vector<int64_t> needed_per_device(const std::vector<RankGpuReport>& reports) {
  size_t devices = 0;
  for (const RankGpuReport& report : reports)
    devices =
        std::max(devices, static_cast<size_t>(report.first_device) + report.device_bytes.size());
  std::vector<int64_t> needed(devices, 0);
  std::vector<bool> reported(devices, false);
  for (const RankGpuReport& report : reports)
    for (size_t i = 0; i < report.device_bytes.size(); ++i) {
      const size_t device = static_cast<size_t>(report.first_device) + i;
      if (reported[device])
        throw std::invalid_argument("memory check: virtual device " + std::to_string(device) +
                                    " is reported by two ranks");
      reported[device] = true;
      needed[device] = report.device_bytes[i];
    }
  return needed;
}

const RankGpuReport& report_of(const std::vector<RankGpuReport>& reports, int rank) {
  const auto found =
      std::find_if(reports.begin(), reports.end(),
                   [rank](const RankGpuReport& report) { return report.rank == rank; });
  assert(found != reports.end());
  return *found;
}

// "rank 0 (virtual devices 0-1, 45.0 GiB)": a rank's part of a shared GPU,
// its NCCL bytes included.
std::string rank_part(const RankGpuReport& report) {
  std::vector<int> devices;
  int64_t bytes = report.nccl_bytes;
  for (size_t i = 0; i < report.device_bytes.size(); ++i) {
    devices.push_back(report.first_device + static_cast<int>(i));
    bytes += report.device_bytes[i];
  }
  return "rank " + std::to_string(report.rank) + " (virtual device" +
         (devices.size() == 1 ? " " : "s ") + device_list_text(devices) + ", " +
         format_bytes(bytes) + ")";
}

// "GPU node1/0000:1B:00.0, shared by rank 0 (...) and rank 1 (...), needs
// 90.0 GiB but has 79.0 GiB free".
std::string describe_shared_shortfall(const RankGpuShortfall& shortfall,
                                      const std::vector<RankGpuReport>& reports) {
  const size_t ranks = shortfall.ranks.size();
  std::string text = "GPU " + report_of(reports, shortfall.ranks.front()).gpu + ", shared by ";
  for (size_t i = 0; i < ranks; ++i)
    text += (i == 0           ? ""
             : i + 1 == ranks ? " and "
                              : ", ") +
            rank_part(report_of(reports, shortfall.ranks[i]));
  const GpuShortfall& bytes = shortfall.bytes;
  text += ", needs " + format_bytes(bytes.needed_bytes);
  if (bytes.nccl_bytes > 0) text += " (NCCL " + format_bytes(bytes.nccl_bytes) + ")";
  return text + " but has " + format_bytes(bytes.free_bytes) + " free";
}

}  // namespace

std::string encode_rank_gpu_report(const RankGpuReport& report) {
  const nlohmann::json json = {{"rank", report.rank},
                               {"gpu", report.gpu},
                               {"cuda_device", report.cuda_device},
                               {"free_bytes", report.free_bytes},
                               {"first_device", report.first_device},
                               {"device_bytes", report.device_bytes},
                               {"nccl_bytes", report.nccl_bytes}};
  return json.dump();
}

RankGpuReport decode_rank_gpu_report(const std::string& text) {
  try {
    const nlohmann::json json = nlohmann::json::parse(text);
    RankGpuReport report;
    report.rank = json.at("rank").get<int>();
    report.gpu = json.at("gpu").get<std::string>();
    report.cuda_device = json.at("cuda_device").get<int>();
    report.free_bytes = json.at("free_bytes").get<int64_t>();
    report.first_device = json.at("first_device").get<int>();
    report.device_bytes = json.at("device_bytes").get<std::vector<int64_t>>();
    report.nccl_bytes = json.at("nccl_bytes").get<int64_t>();
    if (report.rank < 0 || report.first_device < 0)
      throw std::runtime_error("a negative rank or device");
    return report;
  } catch (const std::exception& error) {
    throw std::runtime_error(
        std::string("the memory check between ranks got a report it cannot read (is every rank "
                    "the same pipelab-cli?): ") +
        error.what());
  }
}

std::vector<RankGpuShortfall> find_rank_memory_shortfalls(
    const std::vector<RankGpuReport>& reports) {
  std::vector<const RankGpuReport*> by_rank;
  for (const RankGpuReport& report : reports) by_rank.push_back(&report);
  std::sort(by_rank.begin(), by_rank.end(),
            [](const RankGpuReport* a, const RankGpuReport* b) { return a->rank < b->rank; });

  const std::vector<int64_t> needed = needed_per_device(reports);
  std::vector<int> gpu_of_device(needed.size(), -1);  // -1: no report covers it
  std::vector<std::string> gpus;                      // distinct identities, by first rank
  std::vector<std::vector<int>> ranks_on_gpu;
  std::vector<int64_t> free_per_gpu;
  std::vector<int64_t> nccl_per_gpu;
  for (const RankGpuReport* report : by_rank) {
    const auto known = std::find(gpus.begin(), gpus.end(), report->gpu);
    const size_t gpu = static_cast<size_t>(known - gpus.begin());
    if (known == gpus.end()) {
      gpus.push_back(report->gpu);
      ranks_on_gpu.emplace_back();
      free_per_gpu.push_back(report->free_bytes);
      nccl_per_gpu.push_back(0);
    }
    ranks_on_gpu[gpu].push_back(report->rank);
    // Ranks sharing a GPU read its free bytes at about the same time; the
    // least is the safe side of any difference.
    free_per_gpu[gpu] = std::min(free_per_gpu[gpu], report->free_bytes);
    nccl_per_gpu[gpu] += report->nccl_bytes;
    for (size_t i = 0; i < report->device_bytes.size(); ++i)
      gpu_of_device[static_cast<size_t>(report->first_device) + i] = static_cast<int>(gpu);
  }
  std::vector<RankGpuShortfall> shortfalls;
  for (GpuShortfall& shortfall :
       find_memory_shortfalls(needed, gpu_of_device, free_per_gpu, nccl_per_gpu))
    shortfalls.push_back({ranks_on_gpu[static_cast<size_t>(shortfall.gpu)], std::move(shortfall)});
  return shortfalls;
}

std::string rank_memory_shortfall_message(const std::vector<RankGpuShortfall>& shortfalls,
                                          const std::vector<RankGpuReport>& reports) {
  assert(!shortfalls.empty());
  const std::vector<int64_t> needed = needed_per_device(reports);
  std::string text = kMemoryShortfallStart;
  bool shared = false;
  for (size_t i = 0; i < shortfalls.size(); ++i) {
    const RankGpuShortfall& shortfall = shortfalls[i];
    if (i > 0) text += "; ";
    if (shortfall.ranks.size() > 1) {
      shared = true;
      text += describe_shared_shortfall(shortfall, reports);
      continue;
    }
    const RankGpuReport& report = report_of(reports, shortfall.ranks.front());
    text += describe_shortfall(
        shortfall.bytes, needed,
        "GPU " + std::to_string(report.cuda_device) + " of rank " + std::to_string(report.rank));
  }
  return text + "; " + memory_fixes(shared);
}

}  // namespace pipelab::gpu
