// The GPU topology of one machine, built from a snapshot: which GPU is which
// (CUDA's two orders, nvidia-smi's index, bus id, UUID), where it sits (NUMA
// node, local CPUs, PCIe link) and how each pair of GPUs reaches the other,
// in nvidia-smi topo -m's terms. Pure functions, no I/O; rendering is in
// topo/render.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "snapshot/snapshot.h"

namespace gd {

// The path between two GPUs, nvidia-smi topo -m's legend (nvidia-smi 550,
// transcribed 2026-12):
//   X    = Self
//   SYS  = PCIe as well as the SMP interconnect between NUMA nodes (QPI/UPI)
//   NODE = PCIe as well as the interconnect between PCIe Host Bridges
//          within a NUMA node
//   PHB  = PCIe as well as a PCIe Host Bridge (typically the CPU)
//   PXB  = multiple PCIe bridges (without traversing the PCIe Host Bridge)
//   PIX  = at most a single PCIe bridge
//   NV#  = a bonded set of # NVLinks
// Ordered nearest first, so a smaller value is a shorter PCIe path.
enum class PathKind { kUnknown, kSelf, kNvLink, kPix, kPxb, kPhb, kNode, kSys };

struct Path {
  PathKind kind = PathKind::kUnknown;
  int nvlinks = 0;  // for kNvLink: the number of bonded links
};

// "X", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS", "?".
std::string path_name(const Path& p);

// The PCIe path between two NVIDIA functions from the PCI tree in sysfs
// (Snapshot.pci, Snapshot.pci_bridges, root_bus, parent, numa_node).
// kUnknown when the tree does not say (a function or bridge missing, no root
// bus recorded, NUMA unknown across host bridges): never a guess. `why`
// receives the reason for kUnknown.
PathKind sysfs_pcie_path(const Snapshot& s, const std::string& bdf_a, const std::string& bdf_b,
                         std::string* why = nullptr);

// nvmlGpuTopologyLevel_t -> PathKind (docs/nvidia-facts.md §4,
// nvmlDeviceGetTopologyCommonAncestor): 0 INTERNAL (both on one board) and
// 10 SINGLE -> PIX, 20 MULTIPLE -> PXB, 30 HOSTBRIDGE -> PHB, 40 NODE -> NODE,
// 50 SYSTEM -> SYS; anything else kUnknown.
PathKind nvml_level_path(int level);

// The NVLinks between two GPUs from NVML's link list (NvmlGpu.health.nvlinks):
// active links of `a` whose remote is `b` count directly (and b's towards a,
// the larger count wins); when both have active links to NVSwitches (bus ids
// of PciKind::kNvSwitch functions in Snapshot.pci) every such pair is
// connected through the switches with min(a's switch links, b's switch
// links), as nvidia-smi shows NV18 on HGX H100. nullopt when neither GPU's
// link list is known.
std::optional<int> nvlink_count(const Snapshot& s, const NvmlGpu& a, const NvmlGpu& b);

struct PcieLink {
  int gen = 0;  // current PCIe generation; 0 unknown
  int gen_max = 0;
  int width = 0;  // lanes; 0 unknown
  int width_max = 0;
  std::string source;  // "nvml", "sysfs", "" unknown
};

// PCIe generation from a sysfs link speed (GT/s): 2.5 -> 1, 5 -> 2, 8 -> 3,
// 16 -> 4, 32 -> 5, 64 -> 6 (PCI-SIG base specifications 1.0-6.0); 0 unknown.
int pcie_gen_from_gts(double gts);

struct TopoGpu {
  int smi_index = -1;               // nvidia-smi / NVML index
  std::optional<int> cuda_default;  // CUDA index in the default order; nullopt unknown
  int cuda_pci = -1;                // CUDA index with CUDA_DEVICE_ORDER=PCI_BUS_ID
  std::string bdf;                  // "0000:41:00.0"
  std::string uuid;                 // "" unknown
  std::string model;                // "" unknown
  std::optional<int> numa_node;     // nullopt: unknown or no NUMA affinity (-1 in sysfs)
  // Why numa_node is nullopt when the machine says: "no NUMA node (VM)" for
  // -1 on a GPU straight on a root bus (a virtual machine's passthrough;
  // nvidia-smi topo -m prints 0 there). "" otherwise.
  std::string numa_note;
  std::string cpus;  // local CPU list, "0-31,64-95"; "" unknown
  PcieLink link;
};

// What CUDA_VISIBLE_DEVICES=1 selects under one order.
struct VisibleOne {
  std::string bdf;  // "" when it selects nothing known
  int smi_index = -1;
};

struct Topology {
  // When there is no GPU: why, in one sentence ("no NVIDIA GPU found ...").
  std::string no_gpu;
  std::string source;         // where the GPU list came from: "NVML", "CUDA", "the PCI bus"
  std::vector<TopoGpu> gpus;  // nvidia-smi order
  // paths[i][j] between gpus[i] and gpus[j]: NVLink where there is one, else
  // the PCIe path (NVML's where it answered, else sysfs').
  std::vector<std::vector<Path>> paths;
  std::vector<std::vector<Path>> pcie_paths;  // the PCIe path alone
  bool default_order_known = false;
  bool default_order_observed = false;  // from CUDA's own run, not predicted
  bool order_differs = false;           // default order != PCI order
  VisibleOne cvd1_default;              // CUDA_VISIBLE_DEVICES=1 in the default order
  VisibleOne cvd1_pci;                  // ... with CUDA_DEVICE_ORDER=PCI_BUS_ID
  // One line when the orders differ, "" otherwise.
  std::string order_line;
  // Why some value is "?", where sysfs and NVML disagreed, what the
  // environment sets: one sentence each.
  std::vector<std::string> notes;
};

Topology build_topology(const Snapshot& s);

}  // namespace gd
