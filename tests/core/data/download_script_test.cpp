// Checks datasets/download.sh's checksum verification offline, on the shared
// MNIST t10k files (the download itself needs a network these tests do not use).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_files.h"

namespace pipelab {
namespace {

struct ScriptResult {
  int exit_code = -1;
  std::string output;
};

ScriptResult run_download_script(const std::string& arguments, const test::TempDir& scratch) {
  const std::string script = std::string(PIPELAB_SOURCE_DIR) + "/datasets/download.sh";
  const std::string log = scratch.file("script.log");
  const std::string command = "bash '" + script + "' " + arguments + " > '" + log + "' 2>&1";
  const int status = std::system(command.c_str());
  ScriptResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  result.output = text.str();
  return result;
}

class DownloadScript : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::have_shared_mnist_t10k()) {
      GTEST_SKIP() << "the shared MNIST t10k files are not at " << test::shared_mnist_t10k_folder();
    }
    if (std::system("command -v bash > /dev/null 2>&1") != 0) GTEST_SKIP() << "bash not found";
  }
  test::TempDir scratch_;
};

TEST_F(DownloadScript, VerifiesTheSharedT10kFiles) {
  const ScriptResult result = run_download_script(
      "--verify-only mnist '" + test::shared_mnist_t10k_folder() + "'", scratch_);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("ok       t10k-images-idx3-ubyte.gz"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("ok       t10k-labels-idx1-ubyte.gz"), std::string::npos)
      << result.output;
}

TEST_F(DownloadScript, RejectsATamperedFile) {
  test::TempDir copy;
  const std::string source = test::shared_mnist_t10k_folder() + "/t10k-labels-idx1-ubyte.gz";
  const std::string target = copy.file("t10k-labels-idx1-ubyte.gz");
  std::filesystem::copy_file(source, target);
  {
    std::fstream file(target, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(100);
    file.put('\x5a');
  }
  const ScriptResult result =
      run_download_script("--verify-only mnist '" + copy.path() + "'", scratch_);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("MISMATCH t10k-labels-idx1-ubyte.gz"), std::string::npos)
      << result.output;
}

TEST_F(DownloadScript, FailsOnAnEmptyFolderOrUnknownSet) {
  test::TempDir empty;
  EXPECT_NE(run_download_script("--verify-only mnist '" + empty.path() + "'", scratch_).exit_code,
            0);
  const ScriptResult unknown = run_download_script("cifar '" + empty.path() + "'", scratch_);
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.output.find("unknown data set 'cifar'"), std::string::npos) << unknown.output;
}

}  // namespace
}  // namespace pipelab
