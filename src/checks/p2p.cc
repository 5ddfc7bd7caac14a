// p2p.blocked: PCIe ACS redirects GPU peer-to-peer traffic up to the root
// complex, where an IOMMU that translates DMA stops it: the classic NCCL
// hang (or crawl) on multi-GPU boards with a PCIe switch.
//
// The path between two GPUs is the bridges below their lowest common
// ancestor: in a switch, the downstream ports the two GPUs hang off (and any
// bridge between those and the GPUs). A request from one GPU enters its
// downstream port; with ACS P2P Request Redirect on there, the switch sends
// it up to the root complex instead of across to the peer.
//
// The ACS Control bits that count (PCIe Base Spec 7.7.11.3; Linux counts
// the same three in drivers/pci/p2pdma.c pci_bridge_has_acs_redir and
// clears them for pci=disable_acs_redir=):
//   RR (bit 2) P2P Request Redirect, CR (bit 3) P2P Completion Redirect,
//   EC (bit 5) P2P Egress Control: each sends peer traffic upstream.
// Not counted: SV (bit 0) Source Validation only checks the requester ID
// against the port's bus range, a GPU's own traffic passes; UF (bit 4)
// Upstream Forwarding concerns traffic that already goes up; TB (bit 1)
// Translation Blocking applies to ATS-translated requests, which GPUs do
// not send by default; DT (bit 6) lets translated requests go direct.
// They are quoted in the evidence (Linux sets SV RR CR UF, 0x1d, together).
//
// Severity, by what the root complex does with the redirected traffic:
//   IOMMU translating (on, not passthrough): the peer GPU's BAR address is
//     looked up in the IOMMU as if it were host memory: transfers fail or
//     hang (NCCL's troubleshooting guide: "a significant performance
//     reduction or even a hang"). fail.
//   IOMMU in passthrough (iommu=pt) or off: the root complex routes the
//     traffic back down if it supports peer-to-peer between its ports, at
//     a fraction of the switch's bandwidth; some drop it. warn.
// GPU pairs connected by NVLink (an NVSwitch system, or a link between the
// two) send their traffic over NVLink: ACS there only matters to NICs and
// storage doing GPUDirect RDMA through the same switch. info.
// Pairs that meet only at the root complex (each GPU on its own root port)
// cross it anyway; ACS does not change their route, so they are not
// counted.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "checks/checks.h"
#include "checks/util.h"
#include "util/text.h"

namespace gd {

namespace {

constexpr uint16_t kAcsRR = 1 << 2, kAcsCR = 1 << 3, kAcsEC = 1 << 5;
constexpr uint16_t kAcsRedirect = kAcsRR | kAcsCR | kAcsEC;
constexpr size_t kMaxDepth = 32;  // a snapshot whose parents loop must not loop the check

// ACS Control bit names as lspci prints them ("SrcValid+ ..." in full).
std::string acs_bits(uint16_t ctrl) {
  static const char* const kNames[] = {"SV", "TB", "RR", "CR", "UF", "EC", "DT"};
  std::vector<std::string> on;
  for (int b = 0; b < 7; ++b) {
    if (ctrl & (1u << b)) on.push_back(kNames[b]);
  }
  return on.empty() ? "none" : join(on, " ");
}

// The bridges above a GPU, root port first.
std::vector<const PciBridge*> chain_of(const PciDevice& d,
                                       const std::map<std::string, const PciBridge*>& bridges) {
  std::vector<const PciBridge*> up;
  std::string at = d.parent;
  while (!at.empty() && up.size() < kMaxDepth) {
    auto it = bridges.find(at);
    if (it == bridges.end()) break;
    up.push_back(it->second);
    at = it->second->parent;
  }
  std::reverse(up.begin(), up.end());
  return up;
}

bool nvlinked(const Snapshot& s, const std::string& a, const std::string& b) {
  if (has_nvswitch(s)) return true;
  for (const auto& g : s.nvml.gpus) {
    if (!g.pci_bus_id.ok() || g.pci_bus_id.value != a || !g.health.nvlinks.ok()) continue;
    for (const auto& l : g.health.nvlinks.value) {
      if (l.active.ok() && l.active.value == 1 && l.remote_bus_id.ok() &&
          l.remote_bus_id.value == b) {
        return true;
      }
    }
  }
  return false;
}

std::string iommu_line(const IommuInfo& io) {
  if (!io.known) return "IOMMU: unknown (no /sys/class/iommu or /sys/kernel/iommu_groups)";
  std::string flags = io.cmdline_flags.empty() ? "none" : io.cmdline_flags;
  if (!io.enabled) return "IOMMU: off (no IOMMU unit or group); kernel IOMMU flags: " + flags;
  return fmt::format("IOMMU: on, {} ({} groups); kernel IOMMU flags: {}",
                     io.passthrough ? "passthrough" : "translating DMA", io.groups, flags);
}

struct BridgeUse {
  const PciBridge* bridge = nullptr;
  std::set<std::string> gpus;  // the GPUs whose peer traffic crosses it
};

}  // namespace

std::vector<Finding> check_p2p(const Snapshot& s, const Config&) {
  constexpr const char* kId = "p2p.blocked";
  std::vector<const PciDevice*> gpus = pci_gpus(s);
  if (gpus.size() < 2) {
    return not_applicable(kId, "Fewer than two GPUs on the PCI bus: no peer-to-peer.");
  }
  if (std::none_of(gpus.begin(), gpus.end(),
                   [](const PciDevice* d) { return !d->root_bus.empty(); })) {
    return not_applicable(kId, "The PCI tree above the GPUs was not recorded.");
  }
  std::map<std::string, const PciBridge*> bridges;
  for (const auto& b : s.pci_bridges) bridges[b.bdf] = &b;
  std::vector<std::vector<const PciBridge*>> chains;
  for (const PciDevice* d : gpus) chains.push_back(chain_of(*d, bridges));

  std::map<std::string, BridgeUse> redirect, unknown;  // by bridge bdf
  std::set<std::string> redirect_gpus, nvlink_gpus;
  int switch_pairs = 0, root_pairs = 0;
  bool pcie_pair_redirected = false;
  for (size_t i = 0; i < gpus.size(); ++i) {
    for (size_t j = i + 1; j < gpus.size(); ++j) {
      const auto &a = chains[i], &b = chains[j];
      size_t k = 0;
      while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
      if (k == 0 || gpus[i]->root_bus != gpus[j]->root_bus) {
        ++root_pairs;  // they meet at the root complex
        continue;
      }
      ++switch_pairs;
      const bool nvl = nvlinked(s, gpus[i]->bdf, gpus[j]->bdf);
      std::vector<const PciBridge*> path(a.begin() + static_cast<long>(k), a.end());
      path.insert(path.end(), b.begin() + static_cast<long>(k), b.end());
      for (const PciBridge* br : path) {
        std::map<std::string, BridgeUse>* into = nullptr;
        if (!br->acs_known) {
          into = &unknown;
        } else if (br->acs_capable && (br->acs_ctrl & kAcsRedirect)) {
          into = &redirect;
          (nvl ? nvlink_gpus : redirect_gpus).insert({gpus[i]->bdf, gpus[j]->bdf});
          if (!nvl) pcie_pair_redirected = true;
        }
        if (into == nullptr) continue;
        BridgeUse& u = (*into)[br->bdf];
        u.bridge = br;
        u.gpus.insert({gpus[i]->bdf, gpus[j]->bdf});
      }
    }
  }

  const IommuInfo& io = s.iommu;
  if (!redirect.empty()) {
    Severity sev = Severity::kInfo;
    std::string why;
    if (!pcie_pair_redirected) {
      why =
          "the GPUs reach each other over NVLink, so this only slows GPUDirect RDMA to NICs "
          "or storage behind the same switch";
    } else if (io.enabled && !io.passthrough) {
      sev = Severity::kFail;
      why =
          "the IOMMU translates DMA, so peer-to-peer transfers fail or hang (the classic "
          "NCCL hang)";
    } else {
      sev = Severity::kWarn;
      why = io.enabled ? "the IOMMU is in passthrough, so the root complex must route the "
                         "traffic back down: slower, and some root complexes drop it"
                       : "the root complex must route the traffic back down: slower, and some "
                         "root complexes drop it";
    }
    std::set<std::string> concerned = pcie_pair_redirected ? redirect_gpus : nvlink_gpus;
    Finding f = make_finding(
        kId, sev,
        fmt::format("PCIe ACS redirects peer-to-peer traffic between {} GPUs up to the root "
                    "complex on {} bridge{}: {}",
                    concerned.size(), redirect.size(), redirect.size() == 1 ? "" : "s", why));
    f.gpus.assign(concerned.begin(), concerned.end());
    std::vector<std::string> bdfs;
    for (const auto& [bdf, u] : redirect) {
      bdfs.push_back(bdf);
      f.evidence.push_back(fmt::format(
          "{} [{:04x}:{:04x}]: ACS Control 0x{:04x} ({}), redirect bits 0x{:04x}; on the path "
          "between {}",
          bdf, u.bridge->vendor_id, u.bridge->device_id, u.bridge->acs_ctrl,
          acs_bits(u.bridge->acs_ctrl), u.bridge->acs_ctrl & kAcsRedirect,
          join(std::vector<std::string>(u.gpus.begin(), u.gpus.end()), ", ")));
    }
    f.evidence.push_back(iommu_line(io));
    for (const auto& bdf : bdfs) {
      f.remedy.push_back("sudo setpci -s " + bdf + " ECAP_ACS+0x6.w=0000   # until reboot");
    }
    f.remedy.push_back(
        "To keep it across reboots: add \"pci=disable_acs_redir=" + join(bdfs, ";") +
        "\" (quoted, Linux 4.19+) to GRUB_CMDLINE_LINUX, or turn ACS off in the BIOS (often "
        "under the IOMMU / PCIe settings)");
    if (io.enabled && !io.passthrough) {
      f.remedy.push_back(
          "Or put the IOMMU in passthrough: add iommu=pt to GRUB_CMDLINE_LINUX, update-grub, "
          "reboot (or turn IOMMU / VT-d / AMD-Vi off in the BIOS if nothing needs it)");
    }
    f.remedy.push_back(
        "Until then NCCL_P2P_DISABLE=1 makes NCCL copy through host memory: "
        "slower, but it does not hang");
    return {f};
  }
  if (!unknown.empty()) {
    std::set<std::string> concerned;
    Finding f = make_finding(
        kId, Severity::kInfo,
        fmt::format("ACS on {} bridge{} between GPUs could not be read: run as root "
                    "(sudo gpudoctor check) to see whether peer-to-peer is redirected{}",
                    unknown.size(), unknown.size() == 1 ? "" : "s",
                    io.enabled ? "; with an IOMMU on, Linux enables ACS in every bridge that "
                                 "has it, so it probably is"
                               : ""));
    for (const auto& [bdf, u] : unknown) {
      concerned.insert(u.gpus.begin(), u.gpus.end());
      f.evidence.push_back(bdf + ": " + u.bridge->acs_error);
    }
    f.gpus.assign(concerned.begin(), concerned.end());
    f.evidence.push_back(iommu_line(io));
    return {f};
  }
  if (switch_pairs == 0) {
    return all_ok(kId, fmt::format("No two GPUs share a PCIe switch: the {} GPU pair{} meet "
                                   "at the root complex, where ACS does not change the route.",
                                   root_pairs, root_pairs == 1 ? "" : "s"));
  }
  return all_ok(kId, fmt::format("No ACS redirect on the bridges between the {} GPU pair{} "
                                 "that share a PCIe switch.",
                                 switch_pairs, switch_pairs == 1 ? "" : "s"));
}

}  // namespace gd
