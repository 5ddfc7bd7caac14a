// fabric.switch-missing, link 1 of the fabric chain (docs/fabric.md): the
// NVSwitches the GPUs' fabric needs are on the bus and bound to the NVIDIA
// driver. Without them the fabric manager refuses the topology ("detected
// number of NVSwitches don't match with any supported system topology") and
// Hopper and later GPUs never finish fabric registration, so CUDA answers
// 802. NVLink5 baseboards keep their switches behind the management
// bridge; that side is link 2 (nvlink_network.cc).
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/kernel_events.h"
#include "checks/util.h"
#include "facts/fabric.h"
#include "util/text.h"

namespace gd {

std::vector<Finding> check_fabric_switches(const Snapshot& s, const Config&) {
  constexpr const char* kId = "fabric.switch-missing";
  FabricFacts ff = fabric_facts(s);
  std::vector<std::string> evidence;
  std::vector<std::string> gpus;
  for (const PciDevice* d : ff.switches) {
    if (d->driver != "nvidia") {
      evidence.push_back("NVSwitch " + d->bdf + " (" + pci_id_text(*d) + ") is bound to " +
                         (d->driver.empty() ? std::string("no driver") : d->driver) +
                         ", not nvidia");
    }
  }
  // GPUs waiting for a fabric that has no switch in sight: a VM given the
  // GPUs without their NVSwitches, or switches gone from the bus.
  if (ff.kind == FabricKind::kNone) {
    for (const NvmlGpu* g : ff.fabric_gpus) {
      if (g->fabric_state.value == kFabricCompleted) continue;
      gpus.push_back(fabric_gpu_name(*g));
    }
    if (!gpus.empty()) {
      evidence.push_back(join(gpus, ", ") + ": fabric state " +
                         fabric_state_name(ff.fabric_gpus.front()->fabric_state.value) +
                         ", and no NVSwitch on the PCI bus or in /dev");
    }
  }
  std::vector<const KernelEvent*> said = events_for_finding(s, kId);
  if (!said.empty() && ff.kind == FabricKind::kNvSwitch) {
    // What is left on the bus, beside the fabric manager's refusal of it.
    std::vector<std::string> names;
    for (const PciDevice* d : ff.switches) names.push_back(d->bdf + " (" + pci_id_text(*d) + ")");
    evidence.push_back(std::to_string(names.size()) +
                       " NVSwitch(es) on the PCI bus: " + join(names, ", "));
  }
  if (evidence.empty() && said.empty()) {
    if (ff.kind == FabricKind::kNone) {
      return not_applicable(kId, "No NVSwitch and no GPU waiting for an NVLink fabric.");
    }
    if (ff.kind == FabricKind::kNvSwitch) {
      return all_ok(kId, std::to_string(ff.switches.size()) +
                             " NVSwitch(es) on the PCI bus, bound to the NVIDIA driver.");
    }
    return all_ok(kId, "The NVSwitches sit behind the NVLink management bridge (" + ff.why +
                           "); see the NVLink5 checks.");
  }
  Finding f = make_finding(kId, Severity::kFail,
                           "NVSwitches this machine's NVLink fabric needs are missing or not "
                           "driven by the NVIDIA driver, so the fabric cannot form and CUDA "
                           "cannot start.");
  f.gpus = gpus;
  f.evidence = evidence;
  for (const KernelEvent* e : said) f.evidence.push_back(event_evidence(s, *e));
  f.remedy = {
      "lspci -d 10de: -nn | grep -i bridge   # every NVSwitch of the baseboard must be listed",
      "In a VM: pass the baseboard's NVSwitches through with the GPUs (full passthrough), or "
      "run the fabric manager where they are (shared NVSwitch model).",
      "On bare metal: a switch that left the bus needs a power cycle of the node; if it stays "
      "away, the baseboard needs service (nvidia-bug-report.sh for the vendor)."};
  return {f};
}

}  // namespace gd
