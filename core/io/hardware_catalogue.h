// The hardware catalogue: device and node files (hardware/devices/*.json,
// hardware/nodes/*.json, documented in hardware/README.md), compiled into the
// program and looked up by id, or read from a path a user gives, so a user
// describes their own machines by copying a file and editing it.
//
// A name that contains '/' or ends in ".json" is a path (relative paths are
// looked up beside the experiment file first, then in the working directory);
// any other name is a catalogue id. Every error is an ExperimentError that says
// what is wrong and how to fix it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/hardware/hardware_spec.h"
#include "core/io/experiment.h"

namespace pipelab {

// The ids the catalogue holds, sorted.
std::vector<std::string> catalogue_device_ids();
std::vector<std::string> catalogue_node_ids();

// Reads one file's text; `where` names it in messages. Throws ExperimentError
// for bad JSON, unknown or missing keys, wrong types and unsound values.
DeviceSpec parse_device_spec(const std::string& json_text, const std::string& where);
NodeSpec parse_node_spec(const std::string& json_text, const std::string& where);

// By catalogue id or by path (see above).
DeviceSpec load_device_spec(const std::string& name_or_path, const std::string& base_dir = "");
NodeSpec load_node_spec(const std::string& name_or_path, const std::string& base_dir = "");
bool names_hardware_file(const std::string& name);

// The cost model's profile of a catalogue device in its default node, or
// nothing for a name the catalogue does not hold ("unit" included).
std::optional<DeviceProfile> find_device_profile(const std::string& name);
std::vector<std::string> device_profile_names();  // = catalogue_device_ids()

// The cluster an experiment's simulation runs on: simulation.cluster's node
// (by default the profile device's own node) times its count (0: as many
// nodes as `devices_needed` fill). Throws ExperimentError when a file is
// missing or unsound, the node holds another device than the profile names,
// or the cluster has fewer devices than the run needs.
ClusterSpec resolve_cluster(const SimulationSpec& simulation, const std::string& base_dir, int devices_needed);
// The same for an experiment: its dp x tp x pp devices, its files' paths
// relative to the experiment file. Not for profile "unit".
ClusterSpec experiment_cluster(const Experiment& experiment);

}  // namespace pipelab
