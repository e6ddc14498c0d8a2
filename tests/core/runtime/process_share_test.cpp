#include "core/runtime/process_share.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

TEST(ProcessShare, RanksHostContiguousBlocks) {
  for (int rank = 0; rank < 4; ++rank) {
    const ProcessShare share = process_share(8, 4, rank, 0);
    EXPECT_EQ(share.first_device, 2 * rank);
    EXPECT_EQ(share.device_count, 2);
    EXPECT_TRUE(share.hosts(2 * rank + 1));
    EXPECT_FALSE(share.hosts(2 * rank + 2));
  }
  EXPECT_EQ(process_share(8, 2, 1, 4).first_device, 4);
}

TEST(ProcessShare, RefusesCountsThatDoNotCoverTheDevices) {
  try {
    process_share(6, 4, 0, 0);
    FAIL() << "6 devices on 4 ranks";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("divides 6"), std::string::npos) << error.what();
  }
  EXPECT_THROW(process_share(8, 4, 0, 3), std::invalid_argument);
  EXPECT_THROW(process_share(8, 2, 2, 0), std::invalid_argument);
}

}  // namespace
}  // namespace pipelab
