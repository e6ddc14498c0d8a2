#include "core/runtime/remote_parameter_server.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

namespace pipelab {

void RemoteParameterServer::push(int step, int /*replica*/, int device,
                                 const std::vector<Parameter>& gradients) {
  std::vector<float> row;
  for (const Parameter& parameter : gradients)
    row.insert(row.end(), parameter.grad->data(), parameter.grad->data() + parameter.grad->size());
  transport_.post(home_device_, MessageTag::server_push(device, stage_, step), row.data(), 1,
                  static_cast<int64_t>(row.size()));
}

void RemoteParameterServer::pull(int version, int /*replica*/, int device,
                                 const std::vector<Parameter>& weights) {
  transport_.post(home_device_, MessageTag::server_pull(device, stage_, version), nullptr, 0, 0);
  const Tensor row = mailboxes_[static_cast<size_t>(device)]->receive(
      MessageTag::server_weights(home_device_, stage_, version));
  int64_t expected = 0;
  for (const Parameter& parameter : weights) expected += parameter.value->size();
  if (row.size() != expected)
    throw std::runtime_error("weight version " + std::to_string(version) + " of stage " +
                             std::to_string(stage_) + " came with " + std::to_string(row.size()) +
                             " values for " + std::to_string(expected));
  const float* values = row.data();
  for (const Parameter& parameter : weights) {
    std::copy(values, values + parameter.value->size(), parameter.value->data());
    values += parameter.value->size();
  }
}

void serve_parameter_server_request(ParameterServer& server, int home_device, int replica,
                                    const MessageTag& tag, const float* values, int64_t count,
                                    Transport& transport) {
  if (tag.kind == MessageKind::ParameterServerPush) {
    server.push_row(tag.step, replica, values, count);
    return;
  }
  assert(tag.kind == MessageKind::ParameterServerPull);
  const int to = tag.sender;
  const MessageTag answer = MessageTag::server_weights(home_device, tag.stage, tag.version);
  server.pull_row(
      tag.version, replica, [&transport, to, answer](const std::vector<float>& weights) {
        transport.post(to, answer, weights.data(), 1, static_cast<int64_t>(weights.size()));
      });
}

}  // namespace pipelab
