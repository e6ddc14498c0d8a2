// VirtualDevice: one virtual device of the CUDA executor (one cell of the
// dp x tp x pp grid) as the GPU sees it:
//   context   its GPU, compute stream, cuBLAS handle and CachingAllocator
//             (every byte it holds is counted there, by category)
//   comm      its communication stream: sends and all-reduces run there,
//             ordered against the compute stream with events, so transfers
//             overlap computation
//   recv      its receive stream: NCCL receives into it run there, so a
//             receive never waits behind this device's own sends (an NCCL
//             send holds its stream until the peer receives)
//   mailbox   the messages sent to it, matched by tag (tagged_mailbox.h);
//             each holds the tensor, already on this device, and the event
//             after which its data is there
// Several virtual devices may share one GPU; each keeps its own streams and
// accounting. The executor owns them; workers of other devices use their
// allocator, comm stream and mailbox to send to them.
#pragma once

#include <memory>

#include "core/comm/run_control.h"
#include "core/comm/tagged_mailbox.h"
#include "gpu/device/cuda_handles.h"
#include "gpu/layers/device_context.h"
#include "gpu/memory/device_tensor.h"

namespace pipelab::gpu {

// A message between virtual devices: its tensor lives on the receiver
// (counted as CommBuffers until the receive) and is complete once `arrived`
// has been passed.
struct DeviceMessage {
  DeviceTensor tensor;
  CudaEvent arrived;
};

struct VirtualDevice {
  // Creates the context, the comm and receive streams on `gpu` (throws
  // CudaError when the GPU cannot be used) and the mailbox, which registers
  // with `control`.
  VirtualDevice(int device, int gpu, GemmPrecision precision, RunControl& control);

  int device = 0;
  int gpu = 0;
  std::unique_ptr<DeviceContext> context;
  CudaStream comm;
  CudaStream recv;
  CudaStream copy;  // offloading's copies to and from host memory (host_offload.h)
  TaggedMailbox<DeviceMessage> mailbox;

  CachingAllocator& allocator() { return context->allocator(); }
  cudaStream_t compute_stream() const { return context->stream(); }
  StreamOnDevice compute_on_device() const { return {context->stream(), gpu}; }
  StreamOnDevice comm_on_device() const { return {comm.get(), gpu}; }
  StreamOnDevice recv_on_device() const { return {recv.get(), gpu}; }
  StreamOnDevice copy_on_device() const { return {copy.get(), gpu}; }
};

}  // namespace pipelab::gpu
