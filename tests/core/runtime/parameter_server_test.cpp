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
  server.push(0, 0, a.parameters());
  EXPECT_EQ(server.newest_version(), 0);  // replica 1 has not pushed step 0
  a.grad.fill(0.25f);
  server.push(1, 0, a.parameters());  // a fast replica runs ahead
  b.grad.fill(0.125f);
  server.push(0, 1, b.parameters());
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
  server.push(0, 0, a.parameters());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_FALSE(pulled);
  b.grad.fill(1.0f);
  server.push(0, 1, b.parameters());
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

}  // namespace
}  // namespace pipelab
