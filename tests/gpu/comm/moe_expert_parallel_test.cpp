// GpuMoe at ep 2 (gpu/layers/moe.h): two members on GPU 0, each holding two
// of four experts, their tokens exchanged by a DeviceGroup's all-to-all (the
// device-to-device path), against the CPU layer at ep 2 exchanging through
// core's all-to-all on two threads: each member's output, input gradient and
// weight gradients (its gate and its experts), with and without dropped
// tokens. Skipped without a GPU.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_ring.h"
#include "core/nn/moe_layer.h"
#include "core/comm/all_to_all.h"
#include "gpu/comm/device_group.h"
#include "gpu/device/cuda_check.h"
#include "gpu/layers/moe.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

constexpr int kMembers = 2;
constexpr uint64_t kSeed = 17;
constexpr double kAuxLossWeight = 0.1;

// What one member's layer gives for its micro-batch.
struct MemberResult {
  std::vector<float> y, dx, grads;
};

MoeShape shape(double capacity_factor) {
  MoeShape moe;
  moe.dim = 8;
  moe.experts = 4;
  moe.top_k = 2;
  moe.ffn = 16;
  moe.capacity_factor = capacity_factor;
  return moe;
}

Tensor input(int member) { return testing::random_tensor(24, 8, 100 + member, 2.0); }
Tensor output_gradient(int member) { return testing::random_tensor(24, 8, 200 + member); }

// Runs `member(rank)` for every member at once, one thread each.
void on_every_member(const std::function<void(int)>& member) {
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kMembers; ++rank) threads.emplace_back(member, rank);
  for (std::thread& thread : threads) thread.join();
}

std::vector<MemberResult> run_on_cpu(const MoeShape& moe) {
  std::vector<MemberResult> results(kMembers);
  pipelab::testing::TestRing ring(kMembers);
  on_every_member([&](int rank) {
    MoeLayer layer(1, moe, kAuxLossWeight, ExpertShard{kMembers, rank}, nullptr);
    layer.init(kSeed);
    int64_t collectives = 0;
    MoeLayer::ExpertConnection connection;
    connection.all_to_all = [&](Tensor& values, bool) {
      all_to_all(std::span<float>(values.data(), static_cast<size_t>(values.size())),
                 ring.group(rank), collectives++);
    };
    layer.connect_experts(connection);
    const Tensor x = input(rank);
    std::unique_ptr<LayerState> state;
    const Tensor y = layer.forward_keeping(x, ForwardInfo{}, state);
    const Tensor dx =
        layer.backward_input_with(x, output_gradient(rank), ForwardInfo{}, state.get());
    MemberResult& result = results[static_cast<size_t>(rank)];
    result.y = y.to_vector();
    result.dx = dx.to_vector();
    for (Tensor* grad : layer.grads()) {
      const std::vector<float> part = grad->to_vector();
      result.grads.insert(result.grads.end(), part.begin(), part.end());
    }
  });
  return results;
}

std::vector<MemberResult> run_on_gpu(const MoeShape& moe) {
  std::vector<MemberResult> results(kMembers);
  RunControl control(kMembers);
  CommWorld world({0});
  std::vector<std::unique_ptr<VirtualDevice>> devices;
  for (int rank = 0; rank < kMembers; ++rank)
    devices.push_back(std::make_unique<VirtualDevice>(rank, 0, GemmPrecision::Fp32, control));
  DeviceGroup group({devices[0].get(), devices[1].get()}, control, world);
  EXPECT_FALSE(group.uses_nccl());
  const auto member = [&](int rank) {
    VirtualDevice& device = *devices[static_cast<size_t>(rank)];
    PIPELAB_CUDA_CHECK(cudaSetDevice(device.gpu));
    GpuMoe layer(1, moe, kAuxLossWeight, ExpertShard{kMembers, rank}, kSeed, *device.context);
    GpuMoe::ExpertConnection connection;
    connection.all_to_all = [&](DeviceTensor& values, bool) { group.all_to_all(rank, values); };
    layer.connect_experts(connection);
    const DeviceTensor x =
        DeviceTensor::from_host(input(rank), &device.allocator(), MemoryCategory::Activations);
    const DeviceTensor dy = DeviceTensor::from_host(output_gradient(rank), &device.allocator(),
                                                    MemoryCategory::Activations);
    std::unique_ptr<LayerState> state;
    const DeviceTensor y = layer.forward_keeping(x, ForwardInfo{}, state);
    const DeviceTensor dx = layer.backward_input_with(x, dy, ForwardInfo{}, state.get());
    MemberResult& result = results[static_cast<size_t>(rank)];
    result.y = y.to_vector();
    result.dx = dx.to_vector();
    for (DeviceTensor* grad : layer.grads()) {
      const std::vector<float> part = grad->to_vector();
      result.grads.insert(result.grads.end(), part.begin(), part.end());
    }
  };
  // A member that throws stops the run, so the other leaves its all-to-all.
  testing::run_on_threads(kMembers, member, [&](int, bool threw) {
    if (threw) control.stop();
  });
  return results;
}

TEST(GpuMoeExpertParallel, TwoMembersOnOneGpuMatchTheCpuLayer) {
  PIPELAB_REQUIRE_GPU();
  // Room for every assignment (4.0), and tight enough to drop some (0.5).
  for (const double capacity_factor : {4.0, 0.5}) {
    const MoeShape moe = shape(capacity_factor);
    const std::vector<MemberResult> cpu = run_on_cpu(moe);
    const std::vector<MemberResult> gpu = run_on_gpu(moe);
    for (int rank = 0; rank < kMembers; ++rank) {
      const std::string what =
          "capacity " + std::to_string(capacity_factor) + ", member " + std::to_string(rank);
      const MemberResult& want = cpu[static_cast<size_t>(rank)];
      const MemberResult& got = gpu[static_cast<size_t>(rank)];
      testing::expect_close_to_scale(got.y, want.y, 1e-4, what + ": output");
      testing::expect_close_to_scale(got.dx, want.dx, 1e-3, what + ": input gradient");
      testing::expect_close_to_scale(got.grads, want.grads, 1e-3, what + ": weight gradients");
    }
  }
}

}  // namespace
}  // namespace pipelab::gpu
