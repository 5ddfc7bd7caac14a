// GPU-to-GPU path classification: the PCIe path from the PCI tree in sysfs,
// NVML's common-ancestor level, and NVLink counts from NVML's link list.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "facts/cuda_visible.h"
#include "topo/topology.h"

namespace gd {
namespace {

const PciDevice* find_device(const Snapshot& s, const std::string& bdf) {
  std::string want = normalize_bdf(bdf);
  for (const auto& d : s.pci) {
    if (normalize_bdf(d.bdf) == want) return &d;
  }
  return nullptr;
}

const PciBridge* find_bridge(const Snapshot& s, const std::string& bdf) {
  std::string want = normalize_bdf(bdf);
  for (const auto& b : s.pci_bridges) {
    if (normalize_bdf(b.bdf) == want) return &b;
  }
  return nullptr;
}

// The bridges above a function, nearest first, up to the root port. A bridge
// named as a parent but not recorded makes the chain unknown (nullopt): a
// shorter chain would turn a switch path into a host-bridge one.
// Example: a GPU behind a switch, /sys/devices/pci0000:00/0000:00:01.0/
// 0000:01:00.0/0000:02:08.0/0000:03:00.0, gives 02:08.0, 01:00.0, 00:01.0.
std::optional<std::vector<std::string>> bridge_chain(const Snapshot& s, const PciDevice& d,
                                                     std::string* why) {
  std::vector<std::string> chain;
  std::string p = d.parent;
  while (!p.empty()) {
    const PciBridge* b = find_bridge(s, p);
    if (b == nullptr) {
      *why = fmt::format("bridge {} above {} was not recorded", p, d.bdf);
      return std::nullopt;
    }
    if (chain.size() > 64) {
      *why = fmt::format("the bridges above {} form a loop", d.bdf);
      return std::nullopt;
    }
    chain.push_back(normalize_bdf(b->bdf));
    p = b->parent;
  }
  return chain;
}

// Across host bridges: the same NUMA node is NODE, another is SYS. Without a
// NUMA node (-1: no affinity reported) the local CPU lists decide, since each
// is its node's CPU list; without either the answer is unknown.
PathKind across_host_bridges(const PciDevice& a, const PciDevice& b, std::string* why) {
  if (a.numa_node >= 0 && b.numa_node >= 0) {
    return a.numa_node == b.numa_node ? PathKind::kNode : PathKind::kSys;
  }
  if (!a.local_cpulist.empty() && !b.local_cpulist.empty()) {
    return a.local_cpulist == b.local_cpulist ? PathKind::kNode : PathKind::kSys;
  }
  const PciDevice& unknown = a.numa_node < 0 && a.local_cpulist.empty() ? a : b;
  *why = fmt::format("the NUMA node of {} is not known", unknown.bdf);
  return PathKind::kUnknown;
}

bool link_active(const NvmlNvLink& l) {
  return l.active.ok() && l.active.value == 1 && l.remote_bus_id.ok();
}

int links_to(const NvmlGpu& g, const std::string& bdf) {
  if (!g.health.nvlinks.ok()) return 0;
  int n = 0;
  for (const auto& l : g.health.nvlinks.value) {
    if (link_active(l) && normalize_bdf(l.remote_bus_id.value) == bdf) ++n;
  }
  return n;
}

int links_to_switches(const NvmlGpu& g, const std::set<std::string>& switches) {
  if (!g.health.nvlinks.ok()) return 0;
  int n = 0;
  for (const auto& l : g.health.nvlinks.value) {
    if (link_active(l) && switches.count(normalize_bdf(l.remote_bus_id.value)) != 0) ++n;
  }
  return n;
}

std::string gpu_bdf(const NvmlGpu& g) {
  return g.pci_bus_id.ok() ? normalize_bdf(g.pci_bus_id.value) : std::string();
}

}  // namespace

std::string path_name(const Path& p) {
  switch (p.kind) {
    case PathKind::kSelf:
      return "X";
    case PathKind::kNvLink:
      return fmt::format("NV{}", p.nvlinks);
    case PathKind::kPix:
      return "PIX";
    case PathKind::kPxb:
      return "PXB";
    case PathKind::kPhb:
      return "PHB";
    case PathKind::kNode:
      return "NODE";
    case PathKind::kSys:
      return "SYS";
    case PathKind::kUnknown:
      break;
  }
  return "?";
}

PathKind sysfs_pcie_path(const Snapshot& s, const std::string& bdf_a, const std::string& bdf_b,
                         std::string* why) {
  std::string ignored;
  if (why == nullptr) why = &ignored;
  if (normalize_bdf(bdf_a) == normalize_bdf(bdf_b)) return PathKind::kSelf;
  const PciDevice* a = find_device(s, bdf_a);
  const PciDevice* b = find_device(s, bdf_b);
  if (a == nullptr || b == nullptr) {
    *why = fmt::format("{} is not on the PCI bus read from sysfs", a == nullptr ? bdf_a : bdf_b);
    return PathKind::kUnknown;
  }
  if (a->root_bus.empty() || b->root_bus.empty()) {
    *why = fmt::format("the place of {} in the PCI tree was not recorded",
                       a->root_bus.empty() ? a->bdf : b->bdf);
    return PathKind::kUnknown;
  }
  if (a->root_bus != b->root_bus) return across_host_bridges(*a, *b, why);
  auto chain_a = bridge_chain(s, *a, why);
  if (!chain_a) return PathKind::kUnknown;
  auto chain_b = bridge_chain(s, *b, why);
  if (!chain_b) return PathKind::kUnknown;
  // The nearest common bridge. None: the two meet only in the host bridge.
  for (size_t ia = 0; ia < chain_a->size(); ++ia) {
    auto it = std::find(chain_b->begin(), chain_b->end(), (*chain_a)[ia]);
    if (it == chain_b->end()) continue;
    size_t ib = static_cast<size_t>(it - chain_b->begin());
    // Below a switch's upstream port each side passes one downstream port
    // when both hang off the same switch (PIX); a deeper side passes a
    // further switch's upstream and downstream ports (PXB).
    return ia <= 1 && ib <= 1 ? PathKind::kPix : PathKind::kPxb;
  }
  return PathKind::kPhb;
}

PathKind nvml_level_path(int level) {
  switch (level) {
    case 0:   // NVML_TOPOLOGY_INTERNAL: two GPUs on one board
    case 10:  // NVML_TOPOLOGY_SINGLE
      return PathKind::kPix;
    case 20:  // NVML_TOPOLOGY_MULTIPLE
      return PathKind::kPxb;
    case 30:  // NVML_TOPOLOGY_HOSTBRIDGE
      return PathKind::kPhb;
    case 40:  // NVML_TOPOLOGY_NODE (alias CPU)
      return PathKind::kNode;
    case 50:  // NVML_TOPOLOGY_SYSTEM
      return PathKind::kSys;
    default:
      return PathKind::kUnknown;
  }
}

std::optional<int> nvlink_count(const Snapshot& s, const NvmlGpu& a, const NvmlGpu& b) {
  if (!a.health.nvlinks.ok() && !b.health.nvlinks.ok()) return std::nullopt;
  int direct = std::max(links_to(a, gpu_bdf(b)), links_to(b, gpu_bdf(a)));
  std::set<std::string> switches;
  for (const auto& d : s.pci) {
    if (d.kind == PciKind::kNvSwitch) switches.insert(normalize_bdf(d.bdf));
  }
  int via_switches = 0;
  if (a.health.nvlinks.ok() && b.health.nvlinks.ok()) {
    via_switches = std::min(links_to_switches(a, switches), links_to_switches(b, switches));
  }
  return direct + via_switches;
}

int pcie_gen_from_gts(double gts) {
  struct Row {
    double gts;
    int gen;
  };
  static constexpr Row kGens[] = {{2.5, 1}, {5, 2}, {8, 3}, {16, 4}, {32, 5}, {64, 6}};
  for (const Row& r : kGens) {
    if (std::fabs(gts - r.gts) < 0.01) return r.gen;
  }
  return 0;
}

}  // namespace gd
