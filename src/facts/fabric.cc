#include "facts/fabric.h"

#include <algorithm>

#include "facts/query.h"

namespace gd {

namespace {

constexpr int kNvmlArchHopper = 9;  // nvmlDeviceArchitecture_t (nvidia-facts.md §4)
constexpr int kNvmlArchBlackwell = 10;

}  // namespace

const char* fabric_state_name(int state) {
  switch (state) {
    case 0:
      return "NOT_SUPPORTED";
    case 1:
      return "NOT_STARTED";
    case 2:
      return "IN_PROGRESS";
    case 3:
      return "COMPLETED";
    default:
      return "UNKNOWN";
  }
}

std::string fabric_gpu_name(const NvmlGpu& g) {
  return g.pci_bus_id.ok() ? g.pci_bus_id.value : "GPU " + std::to_string(g.index);
}

std::vector<const NvmlGpu*> gpus_outside_fabric(const FabricFacts& ff) {
  std::vector<const NvmlGpu*> out;
  for (const NvmlGpu* g : ff.fabric_gpus) {
    if (g->fabric_state.value != kFabricCompleted || g->fabric_status.value != 0) out.push_back(g);
  }
  return out;
}

FabricFacts fabric_facts(const Snapshot& s) {
  FabricFacts f;
  for (const auto& d : s.pci) {
    if (d.kind == PciKind::kNvSwitch) f.switches.push_back(&d);
  }
  for (const auto& b : s.fabric.bridges) {
    if (b.switch_management == 1) f.bridges.push_back(&b);
    if (b.switch_management == -1) f.unread_bridges.push_back(&b);
  }
  for (const auto& g : s.nvml.gpus) {
    if (!g.fabric_state.ok() || g.fabric_state.value == kFabricNotSupported) continue;
    if (g.architecture.ok() && g.architecture.value < kNvmlArchHopper) continue;
    f.fabric_gpus.push_back(&g);
    f.blackwell =
        f.blackwell || (g.architecture.ok() && g.architecture.value >= kNvmlArchBlackwell);
  }
  bool switch_nodes = std::any_of(s.devnodes.begin(), s.devnodes.end(), [](const DevNode& n) {
    return n.exists && n.path.rfind("/dev/nvidia-nvswitch", 0) == 0;
  });
  if (!f.bridges.empty()) {
    f.kind = FabricKind::kNvLink5;
    f.why = "NVLink management bridge (VPD SW_MNG) at " + f.bridges.front()->bdf;
  } else if (!f.switches.empty() || switch_nodes) {
    f.kind = FabricKind::kNvSwitch;
    f.why = f.switches.empty() ? "NVSwitch device nodes in /dev"
                               : std::to_string(f.switches.size()) + " NVSwitch(es) on the PCI bus";
  } else if (f.blackwell && !f.fabric_gpus.empty()) {
    // A Blackwell GPU in a fabric with no switch of its own in sight: the
    // switches are behind a bridge whose VPD this user cannot read, or in
    // other trays (multi-node NVLink, configured with IMEX).
    bool multi_node = s.fabric.imex_configured || program_running(s, "nvidia-imex");
    f.kind = multi_node || f.unread_bridges.empty() ? FabricKind::kMultiNode : FabricKind::kNvLink5;
    f.why = f.kind == FabricKind::kMultiNode
                ? "Blackwell GPUs in an NVLink fabric with no NVSwitch on this host"
                : "Blackwell GPUs in an NVLink fabric, and Mellanox functions whose VPD "
                  "could not be read";
  } else if (!f.fabric_gpus.empty() &&
             (s.fabric.imex_configured || program_running(s, "nvidia-imex"))) {
    f.kind = FabricKind::kMultiNode;
    f.why = "GPUs in an NVLink fabric and IMEX configured";
  }
  return f;
}

}  // namespace gd
