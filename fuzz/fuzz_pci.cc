// libFuzzer target: the PCI-tree parsers of the pci and iommu probes
// (probe/pci_topology.h), the CPU-list parser of `run --bind-cpus`
// (report/gpu_fitness.h) and the devnodes probe's two text parsers
// (probe/file_probes.h). The first input byte picks the parser, the rest is
// its input:
//
//   0 + a bridge's binary config space (sysfs `config`, 64..4096 bytes)
//   1 + "0000:05:00.0\n../../../devices/pci0000:00/0000:00:01.0/0000:05:00.0"
//   2 + /proc/cmdline, e.g. "BOOT_IMAGE=/vmlinuz ro intel_iommu=on iommu=pt"
//   3 + a sysfs cpulist, e.g. "0-15,32-47"
//   4 + a recorded device node, e.g. "char 195:0 0666 0:0 refused=EACCES"
//   5 + /proc/self/uid_map, e.g. "0 1000 1\n1 100000 65536"
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/invariants.h"
#include "job/fitness.h"
#include "probe/file_probes.h"
#include "probe/pci_topology.h"

namespace {

void fuzz_acs(std::string_view config) {
  gd::AcsReading a = gd::parse_acs_config(config);
  GD_REQUIRE(a.known == a.error.empty());
  GD_REQUIRE(!a.capable || a.known);
  GD_REQUIRE(a.capable || a.ctrl == 0);
  GD_REQUIRE(!a.garbled || !a.known);
  GD_REQUIRE(a.error.size() < 200);
  GD_REQUIRE(!gd::acs_ctrl_bits(a.ctrl).empty() || a.ctrl == 0);
}

void fuzz_link(std::string_view input) {
  size_t nl = input.find('\n');
  std::string_view bdf = input.substr(0, nl);
  std::string_view target = nl == std::string_view::npos ? "" : input.substr(nl + 1);
  auto p = gd::parse_pci_device_link(bdf, target);
  if (!p.ok()) {
    GD_REQUIRE(!p.error().empty() && p.error().size() < 400);
    return;
  }
  GD_REQUIRE(!p->chain.empty() && p->chain.size() <= gd::kMaxPciDepth);
  GD_REQUIRE(p->root_bus.starts_with("pci"));
  for (const auto& c : p->chain) GD_REQUIRE(gd::is_pci_address(c));
}

void fuzz_cmdline(std::string_view cmdline) {
  gd::IommuCmdline c = gd::parse_iommu_cmdline(cmdline);
  // Flags are shown escaped (a raw byte becomes "\xff"), bounded in number
  // and length whatever the command line holds.
  GD_REQUIRE(c.flags.size() <= 64);
  for (const auto& f : c.flags) {
    GD_REQUIRE(!f.empty() && f.find(' ') == std::string::npos && f.size() <= 128 + 3);
  }
  GD_REQUIRE(!c.passthrough || !c.flags.empty());
}

void fuzz_cpulist(std::string_view text) {
  auto cpus = gd::parse_cpu_list(std::string(text));
  if (!cpus.ok()) {
    GD_REQUIRE(!cpus.error().empty() && cpus.error().size() < 400);
    return;
  }
  for (size_t i = 1; i < cpus->size(); ++i) GD_REQUIRE((*cpus)[i - 1] < (*cpus)[i]);
  for (int c : *cpus) GD_REQUIRE(c >= 0);
  // Formatting and reading back gives the same set.
  auto again = gd::parse_cpu_list(gd::format_cpu_list(*cpus));
  GD_REQUIRE(again.ok() && *again == *cpus);
}

void fuzz_devnode(std::string_view text) {
  auto n = gd::parse_recorded_node(text);
  if (!n.ok()) {
    GD_REQUIRE(!n.error().empty() && n.error().size() < 400);
    GD_REQUIRE(n.error().find('\n') == std::string::npos);
    return;
  }
  GD_REQUIRE(n->mode <= 07777 && n->major >= 0 && n->minor >= 0);
  GD_REQUIRE(n->refused.empty() || n->refused == "EACCES" || n->refused == "EPERM");
}

void fuzz_uid_map(std::string_view text) {
  auto ns = gd::parse_uid_map_is_namespace(text);
  // An identity map of every id is the one answer "no namespace".
  if (ns == false) GD_REQUIRE(text.find("4294967295") != std::string_view::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0:
      fuzz_acs(input);
      break;
    case 1:
      fuzz_link(input);
      break;
    case 2:
      fuzz_cmdline(input);
      break;
    case 3:
      fuzz_cpulist(input);
      break;
    case 4:
      fuzz_devnode(input);
      break;
    default:
      fuzz_uid_map(input);
      break;
  }
  return 0;
}
