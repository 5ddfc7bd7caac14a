// What nodes that should be identical must agree on: driver, CUDA, VBIOS,
// fabric manager, GPU model and count. `gpudoctor diff` compares it across
// snapshots; the exporter's gpudoctor_node_info series carries the same
// fields so a Prometheus rule can alert on drift (docs/diff.md).
#pragma once

#include <string>
#include <vector>

#include "snapshot/snapshot.h"

namespace gd {

struct NodeIdentity {
  std::string driver_version;  // kernel module, else NVML's
  std::string cuda_version;    // the driver's CUDA API, "12.4"; "" unknown
  std::string gpu_model;       // "NVIDIA H100 80GB HBM3"; models joined by "," when mixed
  int gpu_count = 0;           // NVIDIA GPUs on the PCI bus
  std::string vbios;           // distinct VBIOS versions joined by ","
  std::string fabric_manager;  // "running", "running 550.54.15", "not running", "n/a"
  std::string cuda_visible_devices;  // as set in the environment probed; "" unset
};

NodeIdentity node_identity(const Snapshot& s);

// The fields in a fixed order as (name, value) pairs, for diff and metrics.
std::vector<std::pair<std::string, std::string>> identity_fields(const NodeIdentity& id);

}  // namespace gd
