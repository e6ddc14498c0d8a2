#include "gpu/comm/virtual_device.h"

namespace pipelab::gpu {

VirtualDevice::VirtualDevice(int device_id, int gpu_index, GemmPrecision precision,
                             RunControl& control)
    : device(device_id),
      gpu(gpu_index),
      context(std::make_unique<DeviceContext>(gpu_index, precision)),
      comm(gpu_index),
      recv(gpu_index),
      copy(gpu_index),
      mailbox(device_id, control) {}

}  // namespace pipelab::gpu
