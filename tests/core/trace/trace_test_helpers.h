// Small builders shared by the trace tests.
#pragma once

#include "core/trace/trace_events.h"

namespace pipelab::test {

inline TraceEvent make_event(int device, OpKind kind, int microbatch, double t_begin, double t_end,
                             int stage = 0, int64_t bytes = 0) {
  TraceEvent event;
  event.device = device;
  event.op.kind = kind;
  event.op.device = device;
  event.op.stage = stage;
  event.op.microbatch = microbatch;
  event.t_begin = t_begin;
  event.t_end = t_end;
  event.bytes = bytes;
  return event;
}

// Two devices, one pipeline (stage d on device d), in seconds:
//   device 0: F0 [0,1]  F1 [1,2]  SEND [2,2.5]            B0 [4,6]  B1 [6,8]
//   device 1:           RECV [2,2.5]  F0 [2.5,3.5]  B0 [3.5,5.5] ...  B1 [6,7]
// The run spans [0, 8].
inline Trace make_two_device_trace() {
  Trace trace;
  trace.source = "measured";
  trace.time_unit = "s";
  trace.schedule = "gpipe";
  trace.devices = describe_devices(1, 1, 2, 1);
  trace.events = {
      make_event(0, OpKind::Forward, 0, 0.0, 1.0, 0),
      make_event(0, OpKind::Forward, 1, 1.0, 2.0, 0),
      make_event(0, OpKind::SendActivation, 0, 2.0, 2.5, 0, 4096),
      make_event(1, OpKind::RecvActivation, 0, 2.0, 2.5, 1, 4096),
      make_event(1, OpKind::Forward, 0, 2.5, 3.5, 1),
      make_event(1, OpKind::Backward, 0, 3.5, 5.5, 1),
      make_event(0, OpKind::Backward, 0, 4.0, 6.0, 0),
      make_event(1, OpKind::Backward, 1, 6.0, 7.0, 1),
      make_event(0, OpKind::Backward, 1, 6.0, 8.0, 0),
  };
  return trace;
}

}  // namespace pipelab::test
