// The text of a device or node file (hardware/README.md) for a spec: what
// `pipelab-cli calibrate --write` saves, so a user's measured machine is a
// file like the catalogue's, read back by core/io/hardware_catalogue.h.
#pragma once

#include <string>

#include "core/hardware/hardware_spec.h"

namespace pipelab {

std::string device_spec_text(const DeviceSpec& device);
std::string node_spec_text(const NodeSpec& node);

// Writes a cluster's device to `device_path` (a .json file) and its node
// beside it as "<name>-node.json", the device naming that file, so the device
// file alone is what an experiment's simulation.profile names. The ids become
// the file names without ".json". Returns the node file's path. Throws
// ExperimentError when a file cannot be written.
std::string save_hardware_files(ClusterSpec cluster, const std::string& device_path);
// Throws ExperimentError unless `device_path` ends in ".json" (save_hardware_files' first check).
void check_device_file_path(const std::string& device_path);

}  // namespace pipelab
