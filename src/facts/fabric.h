// The NVLink fabric of a machine as the fabric-readiness checks see it:
// which kind of fabric it has, what shows that, and the pieces around it.
//
// The kinds need different software on the host (Fabric Manager User
// Guide, https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html):
//   NVSwitch on the PCI bus (HGX/DGX A100, H100, H200): the fabric manager.
//   NVLink5 baseboard (HGX/DGX B200, B300): the switches sit behind a
//     ConnectX-7 management bridge, so also mlx5_ib, ib_umad and NVLSM,
//     which the fabric manager's unit starts.
//   Multi-node NVLink (GB200/GB300 NVL compute trays): the switch trays run
//     the fabric; the host needs IMEX and its channels.
#pragma once

#include <string>
#include <vector>

#include "snapshot/snapshot.h"

namespace gd {

enum class FabricKind { kNone, kNvSwitch, kNvLink5, kMultiNode };

struct FabricFacts {
  FabricKind kind = FabricKind::kNone;
  std::string why;                           // what shows the kind, for evidence
  std::vector<const PciDevice*> switches;    // NVSwitches on the PCI bus
  std::vector<const NvlinkBridge*> bridges;  // functions whose VPD names SW_MNG
  // Mellanox functions whose VPD could not be read: a bridge or a NIC.
  std::vector<const NvlinkBridge*> unread_bridges;
  // GPUs (Hopper and later) that take part in a fabric: NVML's fabric
  // state is known and not NOT_SUPPORTED.
  std::vector<const NvmlGpu*> fabric_gpus;
  bool blackwell = false;  // a fabric GPU is Blackwell or later
};

FabricFacts fabric_facts(const Snapshot& s);

// "NOT_STARTED", "IN_PROGRESS", ...: NVML's nvmlGpuFabricState_t names.
const char* fabric_state_name(int state);
inline constexpr int kFabricNotSupported = 0;
inline constexpr int kFabricCompleted = 3;

// "0000:18:00.0", else "GPU 3".
std::string fabric_gpu_name(const NvmlGpu& g);

// The fabric GPUs that have not joined: a state short of COMPLETED, or
// COMPLETED with a failure status.
std::vector<const NvmlGpu*> gpus_outside_fabric(const FabricFacts& ff);

}  // namespace gd
