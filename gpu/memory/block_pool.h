// BlockPool: the free blocks a caching allocator keeps for reuse, by size
// class. Training repeats the same tensor shapes every micro-batch, so handing
// a freed block to the next request of the same class avoids cudaMalloc and
// cudaFree (each of which synchronises the device). Sizes round up to 512-byte
// classes, so nearby sizes share blocks. Plain bookkeeping of opaque pointers,
// no CUDA: host tests exercise it with fake addresses.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace pipelab::gpu {

inline constexpr int64_t kBlockGranularity = 512;

// The size class of a request: bytes rounded up to a multiple of 512 (0 stays 0).
int64_t block_size_for(int64_t bytes);

class BlockPool {
 public:
  // A cached block of exactly `block_bytes` (a size class), or nullptr.
  void* take(int64_t block_bytes);
  // Keeps a free block of `block_bytes` for reuse.
  void put(void* block, int64_t block_bytes);
  // Empties the pool, returning every block it held (to give back to CUDA).
  struct Block {
    void* data = nullptr;
    int64_t bytes = 0;
  };
  std::vector<Block> take_all();

  int64_t cached_bytes() const { return cached_bytes_; }
  int64_t cached_blocks() const { return cached_blocks_; }

 private:
  std::unordered_map<int64_t, std::vector<void*>> free_by_size_;
  int64_t cached_bytes_ = 0;
  int64_t cached_blocks_ = 0;
};

}  // namespace pipelab::gpu
