#include "gpu/memory/block_pool.h"

#include <cassert>
#include <stdexcept>
#include <string>

namespace pipelab::gpu {

int64_t block_size_for(int64_t bytes) {
  if (bytes < 0)
    throw std::invalid_argument("an allocation must ask for >= 0 bytes, got " +
                                std::to_string(bytes));
  return (bytes + kBlockGranularity - 1) / kBlockGranularity * kBlockGranularity;
}

void* BlockPool::take(int64_t block_bytes) {
  auto found = free_by_size_.find(block_bytes);
  if (found == free_by_size_.end() || found->second.empty()) return nullptr;
  void* block = found->second.back();  // the most recently freed: likeliest still in L2
  found->second.pop_back();
  cached_bytes_ -= block_bytes;
  --cached_blocks_;
  return block;
}

void BlockPool::put(void* block, int64_t block_bytes) {
  assert(block && block_bytes > 0 && block_bytes % kBlockGranularity == 0);
  free_by_size_[block_bytes].push_back(block);
  cached_bytes_ += block_bytes;
  ++cached_blocks_;
}

std::vector<BlockPool::Block> BlockPool::take_all() {
  std::vector<Block> blocks;
  blocks.reserve(static_cast<size_t>(cached_blocks_));
  for (auto& [bytes, list] : free_by_size_)
    for (void* data : list) blocks.push_back({data, bytes});
  free_by_size_.clear();
  cached_bytes_ = 0;
  cached_blocks_ = 0;
  return blocks;
}

}  // namespace pipelab::gpu
