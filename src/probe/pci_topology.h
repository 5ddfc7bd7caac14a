// The PCI tree above the NVIDIA functions and the IOMMU: the pure parsers
// behind the pci probe's root_bus/parent/pci_bridges fields (sysfs_pci.cc,
// pci_topology.cc) and the iommu probe (iommu.cc), exposed for their tests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "probe/file_probes.h"
#include "probe/probe.h"
#include "util/result.h"

namespace gd {

// Where a function sits: the resolved /sys/bus/pci/devices/<bdf> link.
struct PciPath {
  std::string root_dir;            // "/sys/devices/pci0000:00"
  std::string root_bus;            // "pci0000:00"
  std::vector<std::string> chain;  // bdfs from the root port down to the function itself
};

// Bounds of the walk: no real PCI tree is deeper, and a recorded or
// corrupted one must not make the probe loop or allocate without end.
inline constexpr size_t kMaxPciDepth = 32;

// "0000:17:00.0" (also a VMD domain "10000:e1:00.0"): the shape of a PCI address.
bool is_pci_address(std::string_view s);

// The target of the link /sys/bus/pci/devices/<bdf>, resolved against that
// directory. Error when it does not lead to /sys/devices/pci<root>/.../<bdf>.
Result<PciPath> parse_pci_device_link(std::string_view bdf, std::string_view target);

// ACS from a function's binary config space (sysfs `config`).
struct AcsReading {
  bool known = false;
  bool capable = false;
  uint16_t ctrl = 0;
  std::string error;     // why not known; "" when known
  bool garbled = false;  // the capability list itself is broken (not a short read)
};
AcsReading parse_acs_config(std::string_view config);

// ACS Control register bits (PCIe Base Specification, ACS Extended
// Capability, 7.7.11.3); "SV TB RR CR UF" as lspci prints them.
std::string acs_ctrl_bits(uint16_t ctrl);

// The IOMMU-related kernel parameters of /proc/cmdline, in their order, and
// whether they put the IOMMU in passthrough; later parameters win, as in the
// kernel.
struct IommuCmdline {
  std::vector<std::string> flags;  // "amd_iommu=on", "iommu=pt"
  bool passthrough = false;
};
IommuCmdline parse_iommu_cmdline(std::string_view cmdline);

ProbeRecord probe_iommu_at(const RootFs& fs, Snapshot* s);
ProbeRecord probe_iommu(const ProbeOptions& opt, Snapshot* s);

}  // namespace gd
