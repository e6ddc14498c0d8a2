// The parameter server of asynchronous data parallelism, on plain threads.
#include "core/runtime/parameter_server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace pipelab {
namespace {

struct Replica {
  Tensor weight = Tensor::from_values(1, 2, {1.0f, 2.0f});
  Tensor grad = Tensor(1, 2);
  std::vector<Parameter> parameters() { return {{&weight, &grad}}; }
};

OptimizerSettings plain_sgd() {
  OptimizerSettings settings;
  settings.type = OptimizerType::Sgd;
  settings.lr = 1.0;
  return settings;
}

TEST(ParameterServer, AppliesAStepOnceEveryReplicaPushedIt) {
  RunControl control(2);
  Replica a, b;
  ParameterServer server(a.parameters(), plain_sgd(), 2, control);
  EXPECT_EQ(server.newest_version(), 0);
  a.grad.fill(0.5f);
  server.push(0, 0, 0, a.parameters());
  EXPECT_EQ(server.newest_version(), 0);  // replica 1 has not pushed step 0
  a.grad.fill(0.25f);
  server.push(1, 0, 0, a.parameters());  // a fast replica runs ahead
  b.grad.fill(0.125f);
  server.push(0, 1, 1, b.parameters());
  EXPECT_EQ(server.newest_version(), 1);  // step 1 still misses replica 1
  server.pull(1, 1, 1, b.parameters());
  EXPECT_EQ(b.weight.to_vector(), (std::vector<float>{1.0f - 0.625f, 2.0f - 0.625f}));
  server.pull(0, 0, 0, a.parameters());  // old versions are kept until both pulled past
  EXPECT_EQ(a.weight.to_vector(), (std::vector<float>{1.0f, 2.0f}));
}

TEST(ParameterServer, PullWaitsForItsVersionAndStopEndsTheWait) {
  RunControl control(2);
  Replica a, b;
  ParameterServer server(a.parameters(), plain_sgd(), 2, control);
  bool pulled = false;
  std::thread waiting([&] {
    server.pull(1, 0, 0, a.parameters());
    pulled = true;
  });
  a.grad.fill(1.0f);
  server.push(0, 0, 0, a.parameters());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_FALSE(pulled);
  b.grad.fill(1.0f);
  server.push(0, 1, 1, b.parameters());
  waiting.join();
  EXPECT_TRUE(pulled);
  EXPECT_EQ(a.weight.to_vector(), (std::vector<float>{-1.0f, 0.0f}));

  bool stopped = false;
  std::thread blocked([&] {
    try {
      server.pull(5, 1, 1, b.parameters());
    } catch (const RunStopped&) {
      stopped = true;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  control.stop();
  blocked.join();
  EXPECT_TRUE(stopped);
}

// A replica in another process (remote_parameter_server.h) pushes rows and
// asks for versions it is answered as soon as they exist.
TEST(ParameterServer, RowsFromAnotherProcessMeetTheLocalReplica) {
  RunControl control(2);
  Replica a;
  ParameterServer server(a.parameters(), plain_sgd(), 2, control);
  std::vector<std::vector<float>> answers;
  const auto keep = [&](const std::vector<float>& row) { answers.push_back(row); };
  server.pull_row(0, 1, keep);
  ASSERT_EQ(answers.size(), 1u) << "version 0 exists: answered at once";
  EXPECT_EQ(answers[0], (std::vector<float>{1.0f, 2.0f}));
  server.pull_row(1, 1, keep);
  EXPECT_EQ(answers.size(), 1u) << "version 1 waits for both pushes of step 0";
  const std::vector<float> gradient{0.5f, 0.25f};
  server.push_row(0, 1, gradient.data(), 2);
  EXPECT_EQ(answers.size(), 1u);
  a.grad.fill(1.0f);
  server.push(0, 0, 0, a.parameters());
  ASSERT_EQ(answers.size(), 2u) << "answered by the push that made version 1";
  EXPECT_EQ(answers[1], (std::vector<float>{1.0f - 1.5f, 2.0f - 1.25f}));
  server.pull(1, 0, 0, a.parameters());
  EXPECT_EQ(a.weight.to_vector(), answers[1]) << "the same version as a local pull";
}

TEST(ParameterServer, MalformedRowsAreRefused) {
  RunControl control(2);
  Replica a;
  ParameterServer server(a.parameters(), plain_sgd(), 2, control);
  const std::vector<float> row{1.0f, 1.0f, 1.0f};
  EXPECT_THROW(server.push_row(0, 1, row.data(), 3), std::runtime_error) << "3 values for 2";
  server.push_row(0, 1, row.data(), 2);
  EXPECT_THROW(server.push_row(0, 1, row.data(), 2), std::runtime_error) << "step 0 twice";
  EXPECT_THROW(server.push_row(0, 2, row.data(), 2), std::runtime_error) << "no replica 2";
}

}  // namespace
}  // namespace pipelab
