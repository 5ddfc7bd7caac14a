// What nodes that should be identical must agree on: driver, CUDA, VBIOS,
// fabric manager, GPU model and count, and the settings around them.
// `gpudoctor diff` compares it across snapshots (src/fleet/diff.h); the
// exporter's gpudoctor_node_info series carries identity_fields() so a
// Prometheus rule can alert on drift (docs/diff.md).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "snapshot/snapshot.h"

namespace gd {

// Every value is text as a person reads it; "" means the snapshot does not
// tell (a probe failed or did not run), except for the environment fields,
// where "" means unset.
struct NodeIdentity {
  std::string driver_version;        // kernel module, else NVML's
  std::string cuda_version;          // the driver's CUDA API, "12.4"; "" unknown
  std::string gpu_model;             // "NVIDIA H100 80GB HBM3"; models joined by "," when mixed
  int gpu_count = 0;                 // NVIDIA GPUs on the PCI bus
  std::string vbios;                 // distinct VBIOS versions joined by ","
  std::string fabric_manager;        // "running", "running 550.54.15", "not running", "n/a"
  std::string cuda_visible_devices;  // as set in the environment probed; "" unset

  // --- further drift-relevant fields (diff only; see identity_fields) ---
  // NVML's driver version: the user-space libraries. Differs from
  // driver_version after an upgrade without a reboot (driver.library-mismatch).
  std::string driver_library;
  std::string kernel_module;      // "open", "proprietary"; "" no version line
  std::string nvidia_uvm;         // "loaded", "not loaded"; "" modules unknown
  std::string persistence_mode;   // "on", "off", "on 6/8" (mixed); "" unknown
  std::string persistenced;       // nvidia-persistenced "running", "not running"
  std::string gpus_by_model;      // "8x NVIDIA H100 80GB HBM3" (pci model without NVML)
  std::string cuda_device_order;  // CUDA_DEVICE_ORDER; "" unset
  std::string container;          // "none", or the runtime ("docker"; "container" unnamed)
  std::string iommu;              // "on", "on passthrough", "off"; "" unknown
  std::string iommu_cmdline;      // the IOMMU kernel parameters as written; "" none
  std::map<std::string, std::string> module_params;  // /proc/driver/nvidia/params
  bool module_params_known = false;  // the driver probe ran (an empty map: no module)
};

NodeIdentity node_identity(const Snapshot& s);

// The fields of the gpudoctor_node_info series, in a fixed order as (name,
// value) pairs: driver, cuda, gpu_model, gpu_count, vbios, fabric_manager,
// cuda_visible_devices. Every one is a low-cardinality label (one value per
// node, few distinct values across a fleet); keep it that way.
std::vector<std::pair<std::string, std::string>> identity_fields(const NodeIdentity& id);

// identity_fields() and then the further fields, for `gpudoctor diff`:
// driver_library, kernel_module, nvidia_uvm, persistence_mode, persistenced,
// gpus_by_model, cuda_device_order, container, iommu, iommu_cmdline and one
// "nvidia.<Param>" per module parameter. Values are as a person reads them:
// "" becomes "unknown", or "unset" for the environment and "none" for the
// IOMMU kernel parameters. A parameter the module lacks is not listed.
std::vector<std::pair<std::string, std::string>> drift_fields(const NodeIdentity& id);

}  // namespace gd
