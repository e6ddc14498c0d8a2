// The memory pre-flight of a CUDA run over processes (pipelab-cli under
// mpirun): the ranks that share a GPU count their virtual devices on it
// together, and every rank takes the same decision.
//
// A rank runs all its virtual devices on one GPU (device_mapping.h), and
// several ranks share a GPU when a machine has fewer GPUs than ranks (4 ranks
// on 2 GPUs, 2 on 1). Each could fit alone while together they do not, and
// the run would then run out of memory in the middle of a step. So, while
// each rank builds its executor (cuda_executor.cpp), before any of them
// allocates:
//  1. every rank makes its CUDA context on its own GPU (and none on the
//     other GPUs it sees: device_query.h), then the ranks exchange their GPUs'
//     identities (device_query.h's gpu_identity: host name and PCI bus id),
//     which the plan of NCCL between ranks needs too. Once a rank is past
//     that exchange every rank's contexts exist;
//  2. each rank reads its GPU's free bytes again and sends, in a second
//     exchange, a RankGpuReport: that, its GPU's identity, its devices'
//     estimates (memory_preflight.h) and its NCCL bytes. No rank allocates
//     before it has every report, so no rank's read misses another's
//     context or sees another's run;
//  3. every rank finds the shortfalls from the same reports
//     (find_rank_memory_shortfalls), so all refuse, with the same message,
//     or none does.
// The exchanges are the process share's (an MPI all-gather with the start's
// timeout): a rank that does not come ends the wait with an error, never a
// hang.
//
// Host code, no CUDA or MPI: host tests check it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/executor/memory_preflight.h"

namespace pipelab::gpu {

// What one rank tells the others about its GPU.
struct RankGpuReport {
  int rank = 0;
  std::string gpu;                    // gpu_identity: "node1/0000:1B:00.0"
  int cuda_device = 0;                // the GPU's CUDA number on this rank, for the message
  int64_t free_bytes = 0;             // read after the identities' exchange (above)
  int first_device = 0;               // its virtual devices: first_device, first_device + 1, ...
  std::vector<int64_t> device_bytes;  // estimate_device_bytes' of each
  int64_t nccl_bytes = 0;             // estimate_rank_nccl_bytes
};

// The report as the exchange's text, and back. Decoding throws
// std::runtime_error for a text that is not a report (a rank of another
// build).
std::string encode_rank_gpu_report(const RankGpuReport& report);
RankGpuReport decode_rank_gpu_report(const std::string& text);

// A GPU whose ranks' devices and NCCL bytes add up to more than it has free.
struct RankGpuShortfall {
  std::vector<int> ranks;  // the ranks on it, in order
  // Summed over those ranks (devices, needed and NCCL bytes); free_bytes the
  // least any of them read; gpu the GPU's position among the reports'
  // distinct GPUs, in the order of their first rank.
  GpuShortfall bytes;
};

// Every short GPU among `reports` (each rank's, in any order), grouping the
// ranks by GPU identity. Throws std::invalid_argument when two reports name
// one virtual device.
std::vector<RankGpuShortfall> find_rank_memory_shortfalls(
    const std::vector<RankGpuReport>& reports);

// One line for the user. A GPU of one rank reads as in one process, with its
// rank: "GPU 0 of rank 2 (virtual devices 4-5) needs 51.0 GiB (the largest,
// device 4, 30.0 GiB; NCCL 1.0 GiB) but has 40.0 GiB free". A shared GPU
// names its identity and each rank's part: "GPU node1/0000:1B:00.0, shared
// by rank 0 (virtual devices 0-1, 45.0 GiB) and rank 1 (virtual devices 2-3,
// 45.0 GiB), needs 90.0 GiB but has 79.0 GiB free", and the fixes then start
// with fewer ranks per GPU. `shortfalls` (from `reports`) must not be empty.
std::string rank_memory_shortfall_message(const std::vector<RankGpuShortfall>& shortfalls,
                                          const std::vector<RankGpuReport>& reports);

}  // namespace pipelab::gpu
