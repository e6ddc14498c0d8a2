// Fuzz target: the text of a hardware file (hardware/README.md), read as a
// device file and as a node file. A file either is refused with a readable
// message or gives rates the cost model can divide by.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

void require_usable(double rate) {
  if (!(std::isfinite(rate) && rate > 0)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pipelab;
  const std::string text = fuzz::as_text(data, size);
  DeviceSpec device;
  bool device_ok = false;
  try {
    device = parse_device_spec(text, "device.json");
    device_ok = true;
    require_usable(device.sustained_gemm_flops("fp32"));
    require_usable(device.sustained_gemm_flops("bf16"));
    if (!(std::isfinite(device.op_overhead_s) && device.op_overhead_s >= 0)) std::abort();
  } catch (const ExperimentError& error) {
    fuzz::require_safe_message(error.what());
  }
  try {
    const NodeSpec node = parse_node_spec(text, "node.json");
    if (!device_ok) device = load_device_spec("h100");
    const DeviceProfile profile = device_profile(device, node);
    require_usable(profile.link_bandwidth);
    require_usable(profile.host_link_bandwidth);
    require_usable(node.network.node_bandwidth() / node.devices_per_node);
    if (profile.runtime_bytes < 0 || profile.collective_group_bytes < 0 ||
        profile.all_to_all_peer_bytes < 0)
      std::abort();
  } catch (const ExperimentError& error) {
    fuzz::require_safe_message(error.what());
  }
  return 0;
}
